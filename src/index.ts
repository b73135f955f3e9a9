// The public API of gatehouse.
export * from './webhook/index.js';
export { signatureHeader } from './webhook/sign.js';
export { startServer, createRequestListener, type ServeOptions, type RunningServer } from './sidecar/server.js';
export {
  selectCore,
  defaultCore,
  fallbackCore,
  loadAddonCore,
  nativeModeFromEnv,
  type NativeMode,
  type CoreSelection,
} from './native/index.js';
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

// The auth core and the sidecar host.
export { AuthLayer, type AuthLayerOptions } from './core/auth-layer.js';
export {
  resolveAuthConfig,
  AuthConfigError,
  type AuthConfig,
  type OidcProviderConfig,
  type UnauthenticatedAction,
} from './core/config/auth-config.js';
export { loadAuthConfig } from './core/config/load.js';
export type { RequestView, Decision } from './core/http/request-view.js';
export type { ForwardEdits, HeaderNormalizer } from './core/http/header-policy.js';
export type { TokenStore } from './core/token-store/token-store.js';
export { FileSystemTokenStore } from './core/token-store/filesystem.js';
export { MemoryTokenStore } from './core/token-store/memory.js';
export type { SessionRecord } from './core/session/record.js';
export { LIFECYCLE, SESSION_STATES, transition, type SessionState } from './core/session/lifecycle.js';
export { deriveKey, encryptionKeyFromEnv, parseEncryptionKey } from './core/crypto/keys.js';
export { signSessionId, newSessionId } from './core/crypto/session-id.js';
export { validateReturnUrl } from './core/return-url.js';
export { createGateway, attach, type Gateway, type GatewayOptions } from './sidecar/gateway.js';
export { listenEarly, type Listening } from './sidecar/listen.js';

// The in-server host: the policy the native interception hook runs, and its start inside the module.
export { inServerPolicy, nativeDecision, type NativeRequest, type NativeDecision } from './inserver/policy.js';
export { startInServer, inServerBodyPrefix, type InServer, type InServerOptions } from './inserver/host.js';
export {
  createInterceptor,
  type NativeInterceptor,
  type InterceptorPolicy,
  type HostLink,
} from './native/interceptor.js';
