// The contract every TokenStore implementation must meet. A new store (a
// shared one for several instances, say) runs this same suite.
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import type { TokenStore } from '../../../src/core/token-store/token-store.js';

export interface StoreUnderTest {
  store: TokenStore<Record<string, unknown>>;
  /** Another handle on the same records, as a second instance sharing the store would open it. */
  peer(): TokenStore<Record<string, unknown>>;
  /** Moves the store's clock. */
  advance(ms: number): void;
  now(): number;
  cleanup?(): Promise<void>;
}

export function tokenStoreConformance(name: string, create: () => Promise<StoreUnderTest>): void {
  describe(`TokenStore conformance: ${name}`, () => {
    let subject: StoreUnderTest;
    beforeEach(async () => {
      subject = await create();
    });
    afterEach(async () => {
      await subject.cleanup?.();
    });
    const hour = () => subject.now() + 3_600_000;

    it('an unknown id is absent', async () => {
      expect(await subject.store.get('nope')).to.equal(undefined);
    });

    it('round-trips a record as an equal, independent value', async () => {
      const record = {
        user: 'alice',
        tokens: { access: 'a'.repeat(50), refresh: 'r' },
        claims: [{ typ: 'name', val: 'Zoë 山田' }],
        n: 3,
        ok: true,
      };
      await subject.store.put('s1', record, hour());
      const read = await subject.store.get('s1');
      expect(read).to.deep.equal(record);
      read!.user = 'mallory';
      expect((await subject.store.get('s1'))!.user).to.equal('alice');
    });

    it('an expiry that is not a finite time is refused (RangeError), and what was stored stays', async () => {
      await subject.store.put('s1', { v: 1 }, hour());
      for (const expiresAt of [Number.POSITIVE_INFINITY, Number.NaN, Number.NEGATIVE_INFINITY]) {
        await subject.store.put('s1', { v: 2 }, expiresAt).then(
          () => expect.fail(`put with expiry ${expiresAt} was taken`),
          (error: unknown) => expect(error).to.be.instanceOf(RangeError),
        );
      }
      expect(await subject.store.get('s1')).to.deep.equal({ v: 1 });
      expect(await subject.peer().get('s1')).to.deep.equal({ v: 1 });
    });

    it('replaces a record on a second put', async () => {
      await subject.store.put('s1', { v: 1 }, hour());
      await subject.store.put('s1', { v: 2 }, hour());
      expect(await subject.store.get('s1')).to.deep.equal({ v: 2 });
    });

    it('keeps records of different ids apart', async () => {
      await subject.store.put('a', { who: 'a' }, hour());
      await subject.store.put('b', { who: 'b' }, hour());
      expect(await subject.store.get('a')).to.deep.equal({ who: 'a' });
      expect(await subject.store.get('b')).to.deep.equal({ who: 'b' });
    });

    it('deletes, and deleting twice is fine', async () => {
      await subject.store.put('s1', { v: 1 }, hour());
      await subject.store.delete('s1');
      expect(await subject.store.get('s1')).to.equal(undefined);
      await subject.store.delete('s1');
      await subject.store.delete('never-existed');
    });

    it('a record is absent from its expiry on', async () => {
      await subject.store.put('s1', { v: 1 }, subject.now() + 1000);
      subject.advance(999);
      expect(await subject.store.get('s1')).to.deep.equal({ v: 1 });
      subject.advance(1);
      expect(await subject.store.get('s1')).to.equal(undefined);
    });

    it('sweep removes expired records only and counts them', async () => {
      await subject.store.put('old1', { v: 1 }, subject.now() + 10);
      await subject.store.put('old2', { v: 2 }, subject.now() + 10);
      await subject.store.put('live', { v: 3 }, hour());
      subject.advance(20);
      expect(await subject.store.sweep()).to.equal(2);
      expect(await subject.store.get('live')).to.deep.equal({ v: 3 });
      expect(await subject.store.sweep()).to.equal(0);
    });

    it('hostile ids are just keys', async () => {
      const ids = ['../../etc/passwd', '/abs', 'a\u0000b', 'é', '.', '..', 'CON', 'x'.repeat(5000)];
      for (const [i, id] of ids.entries()) await subject.store.put(id, { i }, hour());
      for (const [i, id] of ids.entries()) expect(await subject.store.get(id), id.slice(0, 20)).to.deep.equal({ i });
    });

    it('concurrent writes to one id leave one whole record', async () => {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => subject.store.put('race', { i, pad: 'p'.repeat(10_000) }, hour())),
      );
      const read = await subject.store.get('race');
      expect(read).to.have.property('i').that.is.within(0, 19);
      expect(read!.pad).to.have.length(10_000);
    });

    it('holds large records (1 MiB)', async () => {
      const big = { blob: 'b'.repeat(1024 * 1024) };
      await subject.store.put('big', big, hour());
      expect(await subject.store.get('big')).to.deep.equal(big);
    });

    describe("exclusive sections (optional; both of gatehouse's stores offer them)", () => {
      beforeEach(function () {
        if (subject.store.exclusive === undefined) this.skip();
      });

      it('sections for one id never overlap, across handles; each runs once', async () => {
        const handles = [subject.store, subject.peer()];
        let active = 0;
        let most = 0;
        const ran: number[] = [];
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            handles[i % 2]!.exclusive!('one', async () => {
              active++;
              most = Math.max(most, active);
              await delay(15);
              ran.push(i);
              active--;
              return i;
            }),
          ),
        );
        expect(most).to.equal(1);
        expect(results).to.deep.equal([0, 1, 2, 3, 4, 5]);
        expect([...ran].sort()).to.deep.equal([0, 1, 2, 3, 4, 5]);
      });

      it("passes the work's error on, and the id is free again afterwards", async () => {
        const failing = subject.store.exclusive!('one', async () => {
          throw new Error('work failed');
        });
        await failing.then(
          () => expect.fail('should have rejected'),
          (error: Error) => expect(error.message).to.equal('work failed'),
        );
        expect(await subject.peer().exclusive!('one', async () => 'next')).to.equal('next');
      });

      it('sweep leaves an expired record whose id is in a section to a later sweep, without waiting for it (a refresh may be writing it back)', async () => {
        await subject.store.put('renewing', { v: 1 }, subject.now() + 10);
        await subject.store.put('ended', { v: 2 }, subject.now() + 10);
        subject.advance(20);
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let holding = false;
        const held = subject.store.exclusive!('renewing', async () => {
          holding = true;
          await gate;
          await subject.store.put('renewing', { v: 3 }, hour());
        });
        while (!holding) await delay(2);
        // From another instance too; it returns while the section still runs.
        expect(await subject.peer().sweep()).to.equal(1);
        release();
        await held;
        expect(await subject.store.get('renewing')).to.deep.equal({ v: 3 });
        expect(await subject.store.get('ended')).to.equal(undefined);
        // Out of any section, an expired record is swept as ever.
        await subject.store.put('renewing', { v: 4 }, subject.now() + 10);
        subject.advance(20);
        expect(await subject.peer().sweep()).to.equal(1);
        expect(await subject.store.exclusive!('renewing', async () => subject.store.get('renewing'))).to.equal(
          undefined,
        );
      });

      it('other ids do not wait for a held one', async () => {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let holding = false;
        const held = subject.store.exclusive!('held', async () => {
          holding = true;
          await gate;
        });
        while (!holding) await delay(2);
        expect(await subject.peer().exclusive!('free', async () => 'ran')).to.equal('ran');
        release();
        await held;
      });
    });
  });
}
