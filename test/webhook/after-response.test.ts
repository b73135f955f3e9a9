// A delivery's subscribers run once its answer is out, or once its connection is gone first: the
// delivery was processed and its id remembered, so a retry would be answered as a duplicate and
// the subscribers would otherwise never run.
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';

import { expect } from 'chai';

import { jsonResponse } from '../../src/webhook/response.js';
import { runAfterResponse } from '../../src/webhook/send.js';

function ran(events: string[]): number {
  let runs = 0;
  const res = new EventEmitter();
  runAfterResponse(res as unknown as ServerResponse, jsonResponse(200, {}, { afterResponse: () => void runs++ }));
  for (const event of events) res.emit(event);
  return runs;
}

describe('work after a webhook answer', () => {
  it('runs once when the answer is out, once when the connection closes first, and once when both happen', () => {
    expect(ran([])).to.equal(0);
    expect(ran(['finish'])).to.equal(1);
    expect(ran(['close'])).to.equal(1);
    expect(ran(['finish', 'close'])).to.equal(1);
  });
});
