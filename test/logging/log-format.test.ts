// Readable lines for a person at a terminal, JSON for everything else (GATEHOUSE_LOG_FORMAT).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

import { LOG_FORMAT_VARIABLE, parseLogFormat } from '../../src/log-format.js';

const logging = fileURLToPath(new URL('../../src/logging.ts', import.meta.url));

/** What a process that logs one line through createLogger() prints on stdout (a pipe, never a terminal). */
function printed(
  env: Record<string, string>,
  format?: string,
): { stdout: string; stderr: string; status: number | null } {
  const script = `
    const { createLogger, flushLogs } = await import(${JSON.stringify(logging)});
    const logger = createLogger('info', undefined, ${format === undefined ? 'undefined' : JSON.stringify(format)});
    logger.info({ path: '/protected', reason: 'no session' }, 'request challenged');
    await flushLogs(logger);`;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, [LOG_FORMAT_VARIABLE]: '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

describe('log format', () => {
  it('is readable lines on a terminal and JSON anywhere else, unless GATEHOUSE_LOG_FORMAT says', () => {
    expect(parseLogFormat(undefined, true)).to.equal('pretty');
    expect(parseLogFormat('', false)).to.equal('json');
    expect(parseLogFormat(' JSON ', true)).to.equal('json');
    expect(parseLogFormat('pretty', false)).to.equal('pretty');
    expect(() => parseLogFormat('text', false)).to.throw(
      TypeError,
      'GATEHOUSE_LOG_FORMAT must be one of json, pretty (got "text")',
    );
  });

  it('writes JSON lines to a pipe by default', () => {
    const { stdout, status } = printed({});
    expect(status).to.equal(0);
    const line = JSON.parse(stdout.trim()) as Record<string, unknown>;
    expect(line).to.include({ msg: 'request challenged', path: '/protected', reason: 'no session', level: 30 });
    expect(line.time).to.be.a('number');
  });

  it('writes one readable line per event when asked, by the variable or by the caller', () => {
    for (const run of [
      printed({ [LOG_FORMAT_VARIABLE]: 'pretty', NO_COLOR: '1' }),
      printed({ NO_COLOR: '1' }, 'pretty'),
    ]) {
      expect(run.status, run.stderr).to.equal(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request challenged \{"path":"\/protected","reason":"no session"\}$/,
      );
    }
  });

  it('refuses an unknown format by name', () => {
    const { status, stderr } = printed({ [LOG_FORMAT_VARIABLE]: 'xml' });
    expect(status).to.not.equal(0);
    expect(stderr).to.contain('GATEHOUSE_LOG_FORMAT must be one of json, pretty (got "xml")');
  });
});
