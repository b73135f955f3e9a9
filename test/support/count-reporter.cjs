// Mocha's spec output, then one plain line with the real counts, which CI reads:
//   N passed, N failed[, N skipped]
'use strict';
const Mocha = require('mocha');

const { EVENT_RUN_END } = Mocha.Runner.constants;

class CountReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats ?? this.stats;
      const skipped = pending > 0 ? `, ${pending} skipped` : '';
      // After the spec reporter's epilogue, so it is the last line.
      process.nextTick(() => console.log(`${passes} passed, ${failures} failed${skipped}`));
    });
  }
}

module.exports = CountReporter;
