/**
 * The X.509 library (@peculiar/x509), loaded through this module only.
 *
 * The library registers its algorithms in tsyringe's global container when it loads, and tsyringe
 * needs the Reflect metadata polyfill before that: ES modules evaluate their imports in order, so the
 * polyfill comes first here. The node's own containers are children of that global one; the library
 * uses string tokens (`crypto.*`) and the node symbols, so they never meet.
 */
import 'reflect-metadata';

export {
  BasicConstraintsExtension,
  Name,
  PemConverter,
  X509Certificate,
  X509CertificateGenerator,
} from '@peculiar/x509';
