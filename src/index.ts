// The public API of gatehouse.
export * from './webhook/index.js';
export { signatureHeader } from './webhook/sign.js';
export { startServer, createApp, createRequestListener, type ServeOptions, type RunningServer } from './sidecar/server.js';
export { selectCore, defaultCore, fallbackCore, loadAddonCore, nativeModeFromEnv, type NativeMode, type CoreSelection } from './native/index.js';
export type { GatehouseCore, Secret, SignatureHeader, SignatureVerifier } from './native/types.js';
export {
  DEFAULT_HEADER_PREFIX,
  HeaderValueError,
  type Claim,
  type Identity,
  type IdentityTokens,
  type NormalizeOptions,
  type NormalizedHeaders,
} from './core/identity.js';
export { createLogger, type Logger } from './logging.js';
