// The shipped nginx configurations (examples/nginx/) as the benchmarks run them: the example's
// ports, and where the caching one keeps its answers, filled in; nothing else changed.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The shipped example, its ports filled in as the tests fill them. */
export function shippedSite(port: number, verifierPort: number, appPort: number): string {
  return filledExample('gatehouse.conf', port, verifierPort, appPort);
}

/** Where examples/nginx/gatehouse-cached.conf keeps the answers, as it ships. */
const SHIPPED_CACHE_PATH = '/var/cache/nginx/gatehouse-verify';

/**
 * The shipped caching example (examples/nginx/gatehouse-cached.conf), its ports filled in and its
 * cache in `directory` (nginx's own, for startNginx): nothing else changed.
 */
export function cachedSite(port: number, verifierPort: number, appPort: number): (directory: string) => string {
  return (directory) => {
    const filled = filledExample('gatehouse-cached.conf', port, verifierPort, appPort);
    if (filled.split(SHIPPED_CACHE_PATH).length !== 2)
      throw new Error(`examples/nginx/gatehouse-cached.conf: its cache is not at ${SHIPPED_CACHE_PATH} once`);
    return filled.replace(SHIPPED_CACHE_PATH, path.join(directory, 'verify-cache'));
  };
}

function filledExample(name: string, port: number, verifierPort: number, appPort: number): string {
  const example = readFileSync(path.join(root, 'examples', 'nginx', name), 'utf8');
  const filled = example
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replace('127.0.0.1:8081;', `127.0.0.1:${verifierPort};`)
    .replace('127.0.0.1:3000;', `127.0.0.1:${appPort};`);
  if (filled.includes('8081;') || filled.includes('3000;') || filled.includes('listen 8080;'))
    throw new Error(`examples/nginx/${name}: its ports are not where the benchmark expects them`);
  return filled;
}
