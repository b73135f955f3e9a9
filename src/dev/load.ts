// The development provider and demo (`gatehouse dev`), loaded only when asked for: oidc-provider
// is no part of serve, and an installed package leaves it out (an optional peer dependency), so
// its absence is said plainly instead of as a module resolution error.
export async function loadDev(): Promise<typeof import('./dev.js')> {
  try {
    return await import('./dev.js');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes("'oidc-provider'");
    if (!missing) throw error;
    throw new Error(
      'gatehouse dev needs the oidc-provider package (its development OpenID provider), which is not installed: ' +
        'gatehouse leaves it out of its dependencies, since serve never uses it. ' +
        'Install it beside gatehouse: npm install --save-dev oidc-provider@^9',
      { cause: error },
    );
  }
}
