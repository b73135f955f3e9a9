// The contract every TokenStore implementation must meet. A new store (a
// shared one for several instances, say) runs this same suite.
import { expect } from 'chai';

import type { TokenStore } from '../../src/core/token-store/token-store.js';

export interface StoreUnderTest {
  store: TokenStore<Record<string, unknown>>;
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
      const record = { user: 'alice', tokens: { access: 'a'.repeat(50), refresh: 'r' }, claims: [{ typ: 'name', val: 'Zoë 山田' }], n: 3, ok: true };
      await subject.store.put('s1', record, hour());
      const read = await subject.store.get('s1');
      expect(read).to.deep.equal(record);
      read!.user = 'mallory';
      expect((await subject.store.get('s1'))!.user).to.equal('alice');
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
      await Promise.all(Array.from({ length: 20 }, (_, i) => subject.store.put('race', { i, pad: 'p'.repeat(10_000) }, hour())));
      const read = await subject.store.get('race');
      expect(read).to.have.property('i').that.is.within(0, 19);
      expect(read!.pad).to.have.length(10_000);
    });

    it('holds large records (1 MiB)', async () => {
      const big = { blob: 'b'.repeat(1024 * 1024) };
      await subject.store.put('big', big, hour());
      expect(await subject.store.get('big')).to.deep.equal(big);
    });
  });
}
