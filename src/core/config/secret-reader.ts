// Secrets of the identityProviders block are never in the document: its `*SettingName` settings
// name environment variables, read here. A variable unset or empty is a problem at its path.

/** Environment variable names as conventionally written (App Service's own: MICROSOFT_PROVIDER_AUTHENTICATION_SECRET). */
const CONVENTIONAL_VARIABLE_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

/**
 * How a `*SettingName` that names no set variable is written in the problem. A secret pasted in
 * place of its variable's name is a common mistake, and the problem is printed and logged: so the
 * name is shown only when it is written as variable names are, and is no variable's value.
 */
function variableNamed(name: string, env: NodeJS.ProcessEnv): string {
  if (CONVENTIONAL_VARIABLE_NAME.test(name) && !Object.values(env).includes(name))
    return `environment variable ${name}`;
  return 'the environment variable it names (not shown: it is not written as variable names are, and may be a secret written in place of a name)';
}

export class SecretReader {
  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly problems: string[],
  ) {}

  /** The variable's value; a problem (and '') when it is unset or empty. */
  required(path: string, name: string): string {
    // Own variables only: `constructor` names no variable, whatever the environment object inherits.
    const value = Object.hasOwn(this.env, name) ? this.env[name] : undefined;
    if (typeof value !== 'string' || value === '') {
      this.problems.push(`${path}: ${variableNamed(name, this.env)} is not set`);
      return '';
    }
    return value;
  }

  optional(path: string, name: string | undefined): string | undefined {
    return name === undefined ? undefined : this.required(path, name);
  }
}
