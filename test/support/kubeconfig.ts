// A kubeconfig file for tests: one cluster, one user with a token, and the contexts to choose between.
import { writeFile } from 'node:fs/promises';

export interface TestKubeconfig {
  server: string;
  token: string;
  /** the CA the server's certificate chains to (PEM) */
  ca?: string | Uint8Array;
  /** the contexts and their namespaces; the first is the current one (default: one named "box") */
  contexts?: { name: string; namespace?: string }[];
}

export async function writeKubeconfig(file: string, c: TestKubeconfig): Promise<void> {
  const contexts = c.contexts ?? [{ name: 'box' }];
  const ca = c.ca === undefined ? {} : { 'certificate-authority-data': Buffer.from(c.ca).toString('base64') };
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': contexts[0].name,
      clusters: [{ name: 'box', cluster: { server: c.server, ...ca } }],
      users: [{ name: 'user', user: { token: c.token } }],
      contexts: contexts.map(({ name, namespace }) => ({
        name,
        context: { cluster: 'box', user: 'user', ...(namespace === undefined ? {} : { namespace }) },
      })),
    }),
  );
}
