// The in-server mode's start: inside a web server's worker process (the IIS
// module embeds Node and loads this through binding/iis/boot.cjs), the same
// auth core the sidecar runs becomes the interceptor the module submits every
// request to. Configuration as for the sidecar: the authsettingsV2 document
// from GATEHOUSE_CONFIG_FILE, else GATEHOUSE_AUTH_CONFIG_JSON /
// WEBSITE_AUTH_V2_CONFIG_JSON.
import { startAuthRuntime } from '../core/auth-runtime.js';
import type { AuthConfig } from '../core/config/auth-config.js';
import { loadAuthConfig } from '../core/config/load.js';
import type { Logger } from '../logging.js';
import { loadAddonCore } from '../native/addon.js';
import { createInterceptor, type HostLink } from '../native/interceptor.js';
import { inServerPolicy } from './policy.js';

/** The linked binding an embedding module adds to its Node environment. */
export const HOST_BINDING = 'gatehouse_host';

/** Requests under the auth routes reach the core with their body (token exchange, form_post callbacks); no other body leaves the app. */
export function inServerBodyPrefix(config: AuthConfig): string {
  return `${config.apiPrefix}/`;
}

/** The host link of the web-server module this Node is embedded in. */
export function embeddedHostLink(): HostLink {
  const linkedBinding = (process as unknown as { _linkedBinding?: (name: string) => { link?: HostLink } })
    ._linkedBinding;
  let link: HostLink | undefined;
  try {
    link = linkedBinding?.call(process, HOST_BINDING).link;
  } catch {
    link = undefined;
  }
  if (link === undefined)
    throw new Error(
      `not running inside the gatehouse web-server module (no ${HOST_BINDING} binding): the in-server mode starts from the module`,
    );
  return link;
}

export interface InServerOptions {
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** Default: the embedding module's link. */
  readonly link?: HostLink;
  readonly version?: string;
}

export interface InServer {
  readonly config: AuthConfig;
  close(): void;
}

export async function startInServer(options: InServerOptions): Promise<InServer> {
  const env = options.env ?? process.env;
  const { logger } = options;
  const link = options.link ?? embeddedHostLink();
  const loaded = loadAuthConfig(env.GATEHOUSE_CONFIG_FILE || undefined, env);
  for (const warning of loaded.warnings) logger.warn({ source: loaded.source }, `configuration: ${warning}`);
  // The hook is native: no TypeScript fallback here. A missing addon fails the start, loudly.
  const core = loadAddonCore();
  const runtime = await startAuthRuntime({
    config: loaded.config,
    logger,
    env,
    headers: core,
    ...(options.version ? { version: options.version } : {}),
  });
  const interceptor = createInterceptor(inServerPolicy(runtime.layer));
  interceptor.attachHost(link, inServerBodyPrefix(loaded.config));
  logger.info(
    { source: loaded.source, app: loaded.config.app },
    'in-server: the auth core is attached to the web-server module',
  );
  return {
    config: loaded.config,
    close: () => {
      interceptor.close();
      void runtime.close();
    },
  };
}
