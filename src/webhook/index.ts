export { verifySignature, signBody } from './verify-signature';
export * from './parse-delivery';
