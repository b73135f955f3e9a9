// Types of app-lockfile.mjs, for the package test.
export interface Lockfile {
  readonly name: string;
  readonly lockfileVersion: 3;
  readonly requires: true;
  readonly packages: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** Writes the app's package.json and package-lock.json beside its copy of the tarball (`tarballFile`, in `directory`). */
export function writeApp(directory: string, tarballFile: string, devDependencies?: readonly string[]): void;
