// GATEHOUSE_LOG_LEVEL (src/log-level.ts): pino's levels in any case, empty as unset, and
// anything else an error that names the variable and the levels.
import { expect } from 'chai';

import { LOG_LEVELS, logLevelFromEnv, parseLogLevel } from '../../src/log-level.js';
import { createLogger } from '../../src/logging.js';

describe('log level', () => {
  it('takes every pino level and silent, in any case and with blanks around it', () => {
    for (const level of LOG_LEVELS) {
      expect(parseLogLevel(level)).to.equal(level);
      expect(parseLogLevel(` ${level.toUpperCase()} `)).to.equal(level);
    }
  });

  it('unset or empty is info', () => {
    expect(logLevelFromEnv({})).to.equal('info');
    expect(logLevelFromEnv({ GATEHOUSE_LOG_LEVEL: '' })).to.equal('info');
    expect(logLevelFromEnv({ GATEHOUSE_LOG_LEVEL: '  ' })).to.equal('info');
    expect(logLevelFromEnv({ GATEHOUSE_LOG_LEVEL: 'Debug' })).to.equal('debug');
  });

  it('anything else names the variable, the levels and the value', () => {
    for (const value of ['verbose', '30', 'warning', 'info,debug', 'inf']) {
      expect(() => logLevelFromEnv({ GATEHOUSE_LOG_LEVEL: value })).to.throw(
        TypeError,
        `GATEHOUSE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got ${JSON.stringify(value)})`,
      );
    }
  });

  it('createLogger applies the level it is given or the environment’s, and refuses an unknown one', () => {
    expect(createLogger('WARN').level).to.equal('warn');
    expect(() => createLogger('verbose')).to.throw(TypeError, 'the log level must be one of');
    const saved = process.env.GATEHOUSE_LOG_LEVEL;
    try {
      process.env.GATEHOUSE_LOG_LEVEL = 'trace';
      expect(createLogger().level).to.equal('trace');
      process.env.GATEHOUSE_LOG_LEVEL = 'loud';
      expect(() => createLogger()).to.throw(TypeError, 'GATEHOUSE_LOG_LEVEL must be one of');
    } finally {
      if (saved === undefined) delete process.env.GATEHOUSE_LOG_LEVEL;
      else process.env.GATEHOUSE_LOG_LEVEL = saved;
    }
  });
});
