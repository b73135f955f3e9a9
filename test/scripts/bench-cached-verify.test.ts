import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

import { judgedRequestsIn } from '../../scripts/bench/judged-requests.js';
import { cachedSite, shippedSite } from '../../scripts/bench/nginx-examples.js';

const examples = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples', 'nginx');
const lines = (text: string) => text.split('\n');

/** The lines of `filled` that differ from the example's, with the example's beside them. */
function changed(example: string, filled: string): Array<[string, string]> {
  const a = lines(example);
  const b = lines(filled);
  expect(b).to.have.length(a.length);
  return a.flatMap((line, i) => (line === b[i] ? [] : [[line, b[i]!] as [string, string]]));
}

describe("the benchmarks' nginx sites: the shipped examples, only ports and paths filled in", () => {
  it('the caching example: its listen, its two upstreams and its cache directory, nothing else', () => {
    const example = readFileSync(path.join(examples, 'gatehouse-cached.conf'), 'utf8');
    const filled = cachedSite(41001, 41002, 41003)('/tmp/nginx-dir');
    const diff = changed(example, filled);
    expect(diff.map(([, now]) => now.trim().split(' ').slice(0, 2).join(' '))).to.deep.equal([
      'proxy_cache_path /tmp/nginx-dir/verify-cache',
      'server 127.0.0.1:41002;',
      'server 127.0.0.1:41003;',
      'listen 127.0.0.1:41001;',
    ]);
    // The cache directory alone changed on its line: its zone, size and lifetimes are the example's.
    expect(diff[0]![1].replace('/tmp/nginx-dir/verify-cache', '/var/cache/nginx/gatehouse-verify')).to.equal(
      diff[0]![0],
    );
    // What makes it the caching configuration is all there.
    expect(filled).to.include('proxy_cache gatehouse_verify;').and.include('proxy_cache_key ');
  });

  it('the plain example: its listen and its two upstreams', () => {
    const example = readFileSync(path.join(examples, 'gatehouse.conf'), 'utf8');
    const diff = changed(example, shippedSite(41001, 41002, 41003));
    expect(diff.map(([, now]) => now.trim())).to.deep.equal([
      'server 127.0.0.1:41002;',
      'server 127.0.0.1:41003;',
      'listen 127.0.0.1:41001;',
    ]);
  });
});

describe("the benchmarks' count of the requests gatehouse judged", () => {
  const PAGE = `# HELP gatehouse_requests_total Requests judged, by outcome
# TYPE gatehouse_requests_total counter
gatehouse_requests_total{outcome="forwarded",reason=""} 1200
gatehouse_requests_total{outcome="challenged",reason="no_session"} 3
gatehouse_requests_total_other{outcome="forwarded"} 99
# HELP gatehouse_logouts_total Sessions ended
gatehouse_logouts_total{source="local"} 7
`;

  it('sums gatehouse_requests_total over every outcome and reason, and nothing else', () => {
    expect(judgedRequestsIn(PAGE)).to.equal(1203);
  });

  it('counts none on a page without it, and refuses a line it cannot read', () => {
    expect(judgedRequestsIn('# nothing\n')).to.equal(0);
    expect(() => judgedRequestsIn('gatehouse_requests_total{outcome="forwarded"} many\n')).to.throw(/unreadable/);
  });
});
