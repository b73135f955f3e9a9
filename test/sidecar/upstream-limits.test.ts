import { expect } from 'chai';

import { DEFAULT_UPSTREAM_CONNECTIONS, DEFAULT_UPSTREAM_QUEUE, resolveUpstreamLimits } from '../../src/sidecar/upstream-limits.js';

describe('upstream connection and queue limits', () => {
  it('default to 512 connections and 1024 waiting; an option wins over the environment; an empty variable is unset', () => {
    expect(resolveUpstreamLimits({}, {})).to.deep.equal({ connections: DEFAULT_UPSTREAM_CONNECTIONS, queue: DEFAULT_UPSTREAM_QUEUE });
    expect(resolveUpstreamLimits({}, { GATEHOUSE_UPSTREAM_CONNECTIONS: '64', GATEHOUSE_UPSTREAM_QUEUE: '0' })).to.deep.equal({ connections: 64, queue: 0 });
    expect(resolveUpstreamLimits({ connections: 8, queue: 4 }, { GATEHOUSE_UPSTREAM_CONNECTIONS: '64' })).to.deep.equal({ connections: 8, queue: 4 });
    expect(resolveUpstreamLimits({}, { GATEHOUSE_UPSTREAM_CONNECTIONS: '', GATEHOUSE_UPSTREAM_QUEUE: '' })).to.deep.equal({ connections: 512, queue: 1024 });
  });

  it('a value that is not a whole number in range is an error naming where it came from', () => {
    for (const value of ['0', '-1', '1e3', ' 8', 'many', '1000001']) {
      expect(() => resolveUpstreamLimits({}, { GATEHOUSE_UPSTREAM_CONNECTIONS: value }), value).to.throw(TypeError, /GATEHOUSE_UPSTREAM_CONNECTIONS must be a whole number/);
    }
    expect(() => resolveUpstreamLimits({}, { GATEHOUSE_UPSTREAM_QUEUE: '-1' })).to.throw(TypeError, /GATEHOUSE_UPSTREAM_QUEUE/);
    expect(() => resolveUpstreamLimits({ connections: 0 }, {})).to.throw(TypeError, /upstreamConnections/);
    expect(() => resolveUpstreamLimits({ queue: 1.5 }, {})).to.throw(TypeError, /upstreamQueue/);
  });
});
