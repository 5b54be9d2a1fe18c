// Calls the installed dispatcher's webhook through its Service, as the apiserver does (or as anyone reaching it could):
// an AdmissionReview body POSTed over HTTPS, trusting the install's CA, with a client certificate or none.
import { request as httpsRequest } from 'node:https';
import type { FerryInstall } from './ferry-install.ts';

export interface ClientCertificate {
  cert?: string;
  key?: string;
}

/** POSTs `body` (a review, or anything else to see it refused) to the webhook; rejects when the connection is refused. */
export function postReview(
  ferry: FerryInstall,
  body: unknown,
  client: ClientCertificate,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      ferry.webhookUrl,
      {
        method: 'POST',
        ca: ferry.ca,
        servername: ferry.serverName,
        ...client,
        headers: { 'content-type': 'application/json' },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
