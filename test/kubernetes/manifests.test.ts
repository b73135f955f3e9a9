// examples/kubernetes as Kubernetes and gatehouse would take it: every document well-formed with
// the fields its kind requires and every reference between them resolving, then what matters for
// a sidecar: the app reachable only through gatehouse, probes on /.auth/ready and /.auth/version, secrets from the
// Secret alone, the encryption key there, and the configuration one gatehouse accepts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';
import { loadAll } from 'js-yaml';

import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { parseEncryptionKey } from '../../src/core/crypto/keys.js';
import { root } from '../support/cli-process.js';

/** Plain YAML data, read through as Kubernetes reads it. */
type Node = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const EXAMPLE = path.join(root, 'examples', 'kubernetes');
const API_VERSIONS: Record<string, string> = {
  ConfigMap: 'v1',
  Secret: 'v1',
  Service: 'v1',
  Deployment: 'apps/v1',
  StatefulSet: 'apps/v1',
  PodDisruptionBudget: 'policy/v1',
};
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** gatehouse's graceful stop lets requests in progress finish for this long. */
const GATEHOUSE_GRACE_SECONDS = 10;

const files = readdirSync(EXAMPLE).filter((file) => file.endsWith('.yaml'));
const documents: Array<{ file: string; doc: Node }> = files
  .filter((file) => file !== 'kustomization.yaml')
  .flatMap((file) =>
    loadAll(readFileSync(path.join(EXAMPLE, file), 'utf8')).map((doc) => ({ file, doc: doc as Node })),
  );
const ofKind = (kind: string): Node[] => documents.filter(({ doc }) => doc.kind === kind).map(({ doc }) => doc);
const only = (kind: string): Node => {
  const found = ofKind(kind);
  expect(found, kind).to.have.length(1);
  return found[0]!;
};
const workloads = (): Node[] => [...ofKind('Deployment'), ...ofKind('StatefulSet')];
const containersOf = (workload: Node): Node[] => workload.spec.template.spec.containers as Node[];
const gatehouseContainer = (): Node =>
  containersOf(only('Deployment')).find((container) => container.name === 'gatehouse')!;
const appContainer = (): Node => containersOf(only('Deployment')).find((container) => container.name === 'app')!;
const labelsMatch = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** An option's value in an argument list (`--port 8080`). */
function option(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
}

/** The Secret's values by key. */
function secretData(): Record<string, string> {
  return only('Secret').stringData as Record<string, string>;
}

describe('examples/kubernetes', () => {
  it('kustomization.yaml lists every manifest, and only those', () => {
    const kustomization = loadAll(readFileSync(path.join(EXAMPLE, 'kustomization.yaml'), 'utf8'))[0] as Node;
    expect(kustomization.kind).to.equal('Kustomization');
    expect([...(kustomization.resources as string[])].sort()).to.deep.equal(
      files.filter((file) => file !== 'kustomization.yaml').sort(),
    );
  });

  it('every document has the apiVersion of its kind and a valid name, unique per kind', () => {
    expect(documents.length).to.be.greaterThan(0);
    const names = new Set<string>();
    for (const { file, doc } of documents) {
      expect(API_VERSIONS[doc.kind], `${file}: kind ${doc.kind}`).to.be.a('string');
      expect(doc.apiVersion, `${file}: ${doc.kind}`).to.equal(API_VERSIONS[doc.kind]);
      expect(doc.metadata?.name, `${file}: ${doc.kind} name`).to.match(DNS_SUBDOMAIN);
      const key = `${doc.kind}/${doc.metadata.name}`;
      expect(names.has(key), key).to.equal(false);
      names.add(key);
    }
  });

  it('workloads: the selector matches the pod labels, every container is named and has an image, requests and well-formed ports', () => {
    for (const workload of workloads()) {
      const what = `${workload.kind}/${workload.metadata.name}`;
      expect(workload.spec.selector?.matchLabels, what).to.be.an('object');
      expect(
        labelsMatch(workload.spec.selector.matchLabels, workload.spec.template.metadata.labels),
        `${what}: selector`,
      ).to.equal(true);
      const containerNames = new Set<string>();
      for (const container of containersOf(workload)) {
        expect(container.name, what).to.match(DNS_LABEL);
        expect(containerNames.has(container.name), `${what}: ${container.name} twice`).to.equal(false);
        containerNames.add(container.name);
        expect(container.image, `${what}/${container.name}: image`).to.be.a('string').and.not.equal('');
        expect(container.resources?.requests?.cpu, `${what}/${container.name}: cpu request`).to.be.a('string');
        expect(container.resources?.requests?.memory, `${what}/${container.name}: memory request`).to.be.a('string');
        for (const port of (container.ports ?? []) as Node[]) {
          expect(port.containerPort, `${what}/${container.name}`).to.be.a('number').within(1, 65535);
          if (port.name !== undefined) expect(port.name, `${what}/${container.name}`).to.match(/^[a-z0-9-]{1,15}$/);
        }
        for (const env of (container.env ?? []) as Node[]) {
          expect(env.name, `${what}/${container.name}`).to.match(/^[A-Za-z_][A-Za-z0-9_]*$/);
          expect(
            'value' in env !== 'valueFrom' in env,
            `${what}/${container.name}: ${env.name} has one of value, valueFrom`,
          ).to.equal(true);
        }
      }
    }
  });

  it('workloads: every probe, mount, ConfigMap and Secret reference resolves', () => {
    const configMaps = new Map(ofKind('ConfigMap').map((doc) => [doc.metadata.name as string, doc]));
    const secrets = new Map(ofKind('Secret').map((doc) => [doc.metadata.name as string, doc]));
    for (const workload of workloads()) {
      const pod = workload.spec.template.spec;
      const volumes = new Map(((pod.volumes ?? []) as Node[]).map((volume) => [volume.name as string, volume]));
      for (const volume of volumes.values()) {
        if (volume.configMap)
          expect(configMaps.has(volume.configMap.name), `ConfigMap ${volume.configMap.name}`).to.equal(true);
      }
      const claims = new Set(
        ((workload.spec.volumeClaimTemplates ?? []) as Node[]).map((claim) => claim.metadata.name as string),
      );
      for (const container of containersOf(workload)) {
        const portNames = new Set(((container.ports ?? []) as Node[]).map((port) => port.name as string));
        for (const probe of [container.readinessProbe, container.livenessProbe].filter(Boolean) as Node[]) {
          const port = (probe.httpGet ?? probe.tcpSocket).port;
          if (typeof port === 'string')
            expect(portNames.has(port), `${container.name}: probe port ${port}`).to.equal(true);
        }
        for (const mount of (container.volumeMounts ?? []) as Node[]) {
          expect(volumes.has(mount.name) || claims.has(mount.name), `${container.name}: volume ${mount.name}`).to.equal(
            true,
          );
        }
        for (const env of (container.env ?? []) as Node[]) {
          const ref = env.valueFrom?.secretKeyRef;
          if (ref === undefined) continue;
          expect(secrets.has(ref.name), `${container.name}: Secret ${ref.name}`).to.equal(true);
          expect(secrets.get(ref.name)!.stringData, `${container.name}: ${ref.name}/${ref.key}`).to.have.property(
            ref.key,
          );
        }
      }
    }
  });

  it("the Service and the PodDisruptionBudget select the Deployment's pods; the budget leaves a replica to drain", () => {
    const deployment = only('Deployment');
    const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
    const service = ofKind('Service').find((doc) => labelsMatch(doc.spec.selector, podLabels))!;
    expect(service, 'a Service for the Deployment').to.not.equal(undefined);
    const budget = only('PodDisruptionBudget');
    expect(labelsMatch(budget.spec.selector.matchLabels, podLabels)).to.equal(true);
    expect(budget.spec.minAvailable).to.be.a('number').lessThan(deployment.spec.replicas);
  });

  it('the app listens on loopback only, and gatehouse on the pod port in front of it', () => {
    const gatehouse = gatehouseContainer();
    const app = appContainer();
    const args = gatehouse.args as string[];
    const appEnv = Object.fromEntries(((app.env ?? []) as Node[]).map((env) => [env.name, env.value]));
    expect(app.ports, 'the app exposes no port').to.equal(undefined);
    expect(appEnv.HOST).to.equal('127.0.0.1');
    expect(option(args, '--upstream')).to.equal(`http://127.0.0.1:${appEnv.PORT}`);
    expect(option(args, '--host')).to.equal('0.0.0.0');
    const http = (gatehouse.ports as Node[]).find((port) => port.name === 'http')!;
    expect(String(http.containerPort)).to.equal(option(args, '--port'));
    const podLabels = only('Deployment').spec.template.metadata.labels as Record<string, string>;
    const service = ofKind('Service').find((doc) => labelsMatch(doc.spec.selector, podLabels))!;
    expect(service.spec.ports.map((port: Node) => port.targetPort)).to.deep.equal(['http']);
  });

  it('gatehouse is probed for readiness on /.auth/ready (503 while Redis is unreachable) and for liveness on /.auth/version, at its own port', () => {
    const gatehouse = gatehouseContainer();
    for (const [probe, path] of [
      [gatehouse.readinessProbe, '/.auth/ready'],
      [gatehouse.livenessProbe, '/.auth/version'],
    ] as Array<[Node, string]>) {
      expect(probe?.httpGet?.path).to.equal(path);
      expect(probe.httpGet.port).to.equal('http');
    }
  });

  it("the pod's stop outlasts gatehouse's graceful stop, and a rolling update keeps every replica until its successor is ready", () => {
    const deployment = only('Deployment');
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).to.be.greaterThan(GATEHOUSE_GRACE_SECONDS);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).to.equal(0);
  });

  it('gatehouse runs as non-root, without privilege escalation, on a read-only root', () => {
    const deployment = only('Deployment');
    const gatehouse = gatehouseContainer();
    expect(deployment.spec.template.spec.securityContext.runAsNonRoot).to.equal(true);
    expect(gatehouse.securityContext.allowPrivilegeEscalation).to.equal(false);
    expect(gatehouse.securityContext.readOnlyRootFilesystem).to.equal(true);
    expect(gatehouse.securityContext.capabilities.drop).to.deep.equal(['ALL']);
  });

  it('secrets come from the Secret alone: no literal in any container or in the configuration', () => {
    const secretValues = Object.values(secretData());
    for (const workload of workloads()) {
      for (const container of containersOf(workload)) {
        const defined = new Set<string>();
        for (const env of (container.env ?? []) as Node[]) {
          if (/SECRET|PASSWORD|KEY|TOKEN/.test(env.name))
            expect(env.valueFrom?.secretKeyRef, `${container.name}: ${env.name}`).to.be.an('object');
          if (typeof env.value === 'string') {
            for (const secret of secretValues)
              expect(env.value.includes(secret), `${container.name}: ${env.name} repeats a secret`).to.equal(false);
            // A value may carry a secret only by naming a variable taken from the Secret before it.
            for (const [, name] of env.value.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g))
              expect(defined.has(name!), `${env.name} uses $(${name})`).to.equal(true);
          }
          if (env.valueFrom?.secretKeyRef) defined.add(env.name);
        }
        for (const arg of (container.args ?? []) as string[]) {
          for (const secret of secretValues)
            expect(arg.includes(secret), `${container.name}: an argument repeats a secret`).to.equal(false);
        }
      }
    }
    const configuration = only('ConfigMap').data['auth.json'] as string;
    expect(configuration).to.not.match(/"clientSecret"\s*:|"consumerSecret"\s*:|"password"\s*:/i);
    for (const secret of secretValues) expect(configuration.includes(secret)).to.equal(false);
  });

  it('the encryption key is in the Secret and given to gatehouse; two replicas share one Redis', () => {
    const gatehouse = gatehouseContainer();
    const env = new Map(((gatehouse.env ?? []) as Node[]).map((entry) => [entry.name as string, entry]));
    expect(secretData()).to.have.property('GATEHOUSE_ENCRYPTION_KEY');
    expect(env.get('GATEHOUSE_ENCRYPTION_KEY')?.valueFrom?.secretKeyRef?.key).to.equal('GATEHOUSE_ENCRYPTION_KEY');
    expect(only('Deployment').spec.replicas).to.be.greaterThan(1);
    const redisUrl = new URL(
      (env.get('GATEHOUSE_REDIS_URL')!.value as string).replace('$(REDIS_PASSWORD)', 'password'),
    );
    const redisService = ofKind('Service').find((service) => service.metadata.name === redisUrl.hostname);
    expect(redisService, `a Service named ${redisUrl.hostname}`).to.not.equal(undefined);
    expect(redisService!.spec.ports.map((port: Node) => String(port.port))).to.include(redisUrl.port);
  });

  it("the Secret's placeholders are refused at start: applied unchanged, gatehouse does not run", () => {
    expect(() => parseEncryptionKey(secretData().GATEHOUSE_ENCRYPTION_KEY!, 'GATEHOUSE_ENCRYPTION_KEY')).to.throw(
      /must be 32 bytes/,
    );
  });

  it('the configuration is mounted where --config reads it, and gatehouse accepts it with the Secret as environment', () => {
    const gatehouse = gatehouseContainer();
    const configPath = option(gatehouse.args as string[], '--config')!;
    const mount = ((gatehouse.volumeMounts ?? []) as Node[]).find((candidate) =>
      configPath.startsWith(`${candidate.mountPath}/`),
    )!;
    expect(mount, `a mount holding ${configPath}`).to.not.equal(undefined);
    const volume = (only('Deployment').spec.template.spec.volumes as Node[]).find(
      (candidate) => candidate.name === mount.name,
    )!;
    const configMap = ofKind('ConfigMap').find((doc) => doc.metadata.name === volume.configMap.name)!;
    const document = JSON.parse(configMap.data[path.basename(configPath)] as string) as unknown;
    const { config, warnings } = resolveAuthConfig(document, secretData());
    expect(warnings).to.deep.equal([]);
    expect([...config.providers.keys()]).to.deep.equal(['corp']);
  });
});
