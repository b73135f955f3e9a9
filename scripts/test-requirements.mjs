// Before the suite starts (npm test): the system programs its tests start
// themselves, each found or named with the command that installs it, so that a
// fresh machine hears what it lacks at once, not as failures scattered through
// a four-minute run. `bash .ci/run` installs them all (as root, or with sudo).
import { existsSync } from 'node:fs';

const requirements = [
  {
    what: 'Chromium (the end-to-end browser tests)',
    path: process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium',
    debian: 'chromium',
  },
  {
    what: 'redis-server (the Redis store and several-instance tests)',
    path: process.env.GATEHOUSE_REDIS_SERVER ?? '/usr/bin/redis-server',
    debian: 'redis-server',
  },
  { what: 'redis-cli (makes the test Redis Cluster)', path: '/usr/bin/redis-cli', debian: 'redis-tools' },
  {
    what: 'nginx (forward authentication behind the shipped nginx configuration)',
    path: process.env.GATEHOUSE_NGINX ?? '/usr/sbin/nginx',
    debian: 'nginx-light',
  },
  {
    what: 'Caddy (forward authentication behind the shipped Caddyfile)',
    path: process.env.GATEHOUSE_CADDY ?? '/usr/bin/caddy',
    debian: 'caddy',
  },
];

const missing = requirements.filter(({ path }) => !existsSync(path));
if (missing.length > 0) {
  console.error('npm test: the tests need programs this machine does not have:');
  for (const { what, path } of missing) console.error(`  - ${what}: ${path}`);
  console.error(
    `Install them (Debian/Ubuntu): sudo apt-get update && sudo apt-get install -y ${[...new Set(missing.map(({ debian }) => debian))].join(' ')}`,
  );
  console.error('or run bash .ci/run, which installs everything the tests need and then runs them.');
  console.error('0 passed, 1 failed');
  process.exit(1);
}
