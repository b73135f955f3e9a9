// How long the app may stay silent: upstreamTimeoutMs, else GATEHOUSE_UPSTREAM_TIMEOUT_MS, else 60 s.
import { expect } from 'chai';

import {
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  MAX_UPSTREAM_TIMEOUT_MS,
  resolveUpstreamTimeout,
} from '../../src/sidecar/upstream-timeout.js';

describe('upstream timeout setting', () => {
  it('defaults to 60 s; an empty variable counts as unset', () => {
    expect(DEFAULT_UPSTREAM_TIMEOUT_MS).to.equal(60_000);
    expect(resolveUpstreamTimeout(undefined, {})).to.equal(60_000);
    expect(resolveUpstreamTimeout(undefined, { GATEHOUSE_UPSTREAM_TIMEOUT_MS: '' })).to.equal(60_000);
  });

  it('is read from GATEHOUSE_UPSTREAM_TIMEOUT_MS; the option wins over it', () => {
    expect(resolveUpstreamTimeout(undefined, { GATEHOUSE_UPSTREAM_TIMEOUT_MS: '300000' })).to.equal(300_000);
    expect(resolveUpstreamTimeout(1500, { GATEHOUSE_UPSTREAM_TIMEOUT_MS: '300000' })).to.equal(1500);
  });

  it('takes up to the longest timer minus the client margin, so the client idle timeout still fits in one', () => {
    expect(MAX_UPSTREAM_TIMEOUT_MS).to.equal(2_147_483_647 - 5_000);
    expect(
      resolveUpstreamTimeout(undefined, { GATEHOUSE_UPSTREAM_TIMEOUT_MS: String(MAX_UPSTREAM_TIMEOUT_MS) }),
    ).to.equal(MAX_UPSTREAM_TIMEOUT_MS);
  });

  it('refuses what is not a whole number of milliseconds in range, naming where it came from', () => {
    for (const value of [
      '0',
      '-1',
      'abc',
      '1e3',
      '0x10',
      ' 60 ',
      '1.5',
      String(MAX_UPSTREAM_TIMEOUT_MS + 1),
      '99999999999999999999',
    ]) {
      expect(() => resolveUpstreamTimeout(undefined, { GATEHOUSE_UPSTREAM_TIMEOUT_MS: value }), value).to.throw(
        TypeError,
        `GATEHOUSE_UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds, 1-${MAX_UPSTREAM_TIMEOUT_MS} (got ${JSON.stringify(value)})`,
      );
    }
    for (const value of [0, -5, 2.5, Number.NaN, Infinity, 3e9]) {
      expect(() => resolveUpstreamTimeout(value, {}), String(value)).to.throw(
        TypeError,
        /^upstreamTimeoutMs must be a whole number of milliseconds/,
      );
    }
  });
});
