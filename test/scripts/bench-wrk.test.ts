import { expect } from 'chai';

import { parseWrk, wrkMilliseconds } from '../../scripts/bench/wrk.js';

// wrk 4.1's report (`--latency`), as the benchmarks read it.
const REPORT = `Running 1s test @ http://127.0.0.1:39123/bad
  1 threads and 2 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   817.32us    1.84ms  21.67ms   90.53%
    Req/Sec     9.66k     7.20k   19.84k    60.00%
  Latency Distribution
     50%  126.00us
     75%  510.00us
     90%    2.54ms
     99%    8.70ms
  9583 requests in 1.00s, 1.31MB read
  Socket errors: connect 0, read 2, write 1, timeout 3
  Non-2xx or 3xx responses: 9583
Requests/sec:   9549.48
Transfer/sec:      1.30MB
`;

describe("the benchmarks' reading of wrk", () => {
  it('reads the count, the rate, the failures (non-2xx/3xx and socket errors) and the percentiles', () => {
    expect(parseWrk(REPORT)).to.deep.equal({ total: 9583, rps: 9549.48, bad: 9583 + 6, p50: 0.126, p99: 8.7 });
  });

  it('reads latencies in µs, ms and s as milliseconds, and anything else as NaN', () => {
    expect(wrkMilliseconds('812.00us')).to.be.closeTo(0.812, 1e-9);
    expect(wrkMilliseconds('1.23ms')).to.equal(1.23);
    expect(wrkMilliseconds('2.01s')).to.be.closeTo(2010, 1e-9);
    expect(wrkMilliseconds('')).to.be.NaN;
  });

  it('counts no failures and no percentiles where wrk printed none', () => {
    const clean = REPORT.replace(/ {2}Socket errors.*\n/, '')
      .replace(/ {2}Non-2xx.*\n/, '')
      .replace(/ {5}\d+%.*\n/g, '');
    const read = parseWrk(clean);
    expect(read.bad).to.equal(0);
    expect(read.p50).to.be.NaN;
  });
});
