import { expect } from 'chai';

import {
  DEFAULT_UPSTREAM_CONNECTIONS,
  DEFAULT_UPSTREAM_QUEUE,
  DEFAULT_UPSTREAM_WEBSOCKETS,
  resolveUpstreamLimits,
} from '../../src/sidecar/upstream-limits.js';

describe('upstream connection and queue limits', () => {
  it('default to 512 connections, 1024 waiting and 1024 WebSocket connections; an option wins over the environment; an empty variable is unset', () => {
    expect(resolveUpstreamLimits({}, {})).to.deep.equal({
      connections: DEFAULT_UPSTREAM_CONNECTIONS,
      queue: DEFAULT_UPSTREAM_QUEUE,
      webSockets: DEFAULT_UPSTREAM_WEBSOCKETS,
    });
    expect(
      resolveUpstreamLimits(
        {},
        { GATEHOUSE_UPSTREAM_CONNECTIONS: '64', GATEHOUSE_UPSTREAM_QUEUE: '0', GATEHOUSE_UPSTREAM_WEBSOCKETS: '0' },
      ),
    ).to.deep.equal({ connections: 64, queue: 0, webSockets: 0 });
    expect(
      resolveUpstreamLimits(
        { connections: 8, queue: 4, webSockets: 2 },
        { GATEHOUSE_UPSTREAM_CONNECTIONS: '64', GATEHOUSE_UPSTREAM_WEBSOCKETS: '9' },
      ),
    ).to.deep.equal({ connections: 8, queue: 4, webSockets: 2 });
    expect(
      resolveUpstreamLimits(
        {},
        { GATEHOUSE_UPSTREAM_CONNECTIONS: '', GATEHOUSE_UPSTREAM_QUEUE: '', GATEHOUSE_UPSTREAM_WEBSOCKETS: '' },
      ),
    ).to.deep.equal({ connections: 512, queue: 1024, webSockets: 1024 });
    expect(() => resolveUpstreamLimits({}, { GATEHOUSE_UPSTREAM_WEBSOCKETS: 'lots' })).to.throw(
      TypeError,
      /GATEHOUSE_UPSTREAM_WEBSOCKETS must be a whole number/,
    );
  });

  it('a value that is not a whole number in range is an error naming where it came from', () => {
    for (const value of ['0', '-1', '1e3', ' 8', 'many', '1000001']) {
      expect(() => resolveUpstreamLimits({}, { GATEHOUSE_UPSTREAM_CONNECTIONS: value }), value).to.throw(
        TypeError,
        /GATEHOUSE_UPSTREAM_CONNECTIONS must be a whole number/,
      );
    }
    expect(() => resolveUpstreamLimits({}, { GATEHOUSE_UPSTREAM_QUEUE: '-1' })).to.throw(
      TypeError,
      /GATEHOUSE_UPSTREAM_QUEUE/,
    );
    expect(() => resolveUpstreamLimits({ connections: 0 }, {})).to.throw(TypeError, /upstreamConnections/);
    expect(() => resolveUpstreamLimits({ queue: 1.5 }, {})).to.throw(TypeError, /upstreamQueue/);
  });
});
