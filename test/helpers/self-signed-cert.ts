/**
 * A throwaway TLS certificate for 127.0.0.1 (self-signed, EC P-256, one day), made by the system's
 * `openssl` in a temp dir: for local upstreams a client insists on reaching over https (`@azure/identity`
 * refuses an http authority host). A gateway process trusts it through `NODE_EXTRA_CA_CERTS=<certFile>`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './tmp.ts';

export interface SelfSignedCert {
  key: string;
  cert: string;
  /** The certificate's PEM file (for `NODE_EXTRA_CA_CERTS`). */
  certFile: string;
}

export function selfSignedCert(): SelfSignedCert {
  const dir = tempDir('tollgate-cert-');
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}
