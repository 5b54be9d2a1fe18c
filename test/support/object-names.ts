// Kubernetes object names for property tests: DNS-1123 subdomains of up to 253 characters, as the apiserver takes
// them for a PVC, a schedule or a DataUpload.
import fc from 'fast-check';

export const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Names of 1 to `parts` dot-joined labels of up to `labelLength` characters, cut to 253 and kept valid. */
export function subdomainNames(parts: number, labelLength: number): fc.Arbitrary<string> {
  const label = fc.stringMatching(new RegExp(`^[a-z0-9]([-a-z0-9]{0,${labelLength - 2}}[a-z0-9])?$`));
  return fc
    .array(label, { minLength: 1, maxLength: parts })
    .map((labels) =>
      labels
        .join('.')
        .slice(0, 253)
        .replace(/[-.]+$/, ''),
    )
    .filter((n) => dnsSubdomain.test(n));
}
