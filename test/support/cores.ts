import { fallbackCore, loadAddonCore, type GatehouseCore } from '../../src/native/index.js';

/**
 * Both implementations of the core. The native one must load: a missing
 * addon fails the suite (set GATEHOUSE_TEST_ALLOW_NO_NATIVE=1 only on a
 * machine that cannot build it), so the fallback can never hide a broken build.
 */
export function coresUnderTest(): Array<{ name: string; load: () => GatehouseCore }> {
  return [
    {
      name: 'native addon',
      load: () => {
        try {
          return loadAddonCore();
        } catch (error) {
          if (process.env.GATEHOUSE_TEST_ALLOW_NO_NATIVE === '1') return fallbackCore;
          throw error;
        }
      },
    },
    { name: 'TypeScript fallback', load: () => fallbackCore },
  ];
}
