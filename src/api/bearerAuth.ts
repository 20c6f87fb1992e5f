/**
 * API keys to tenants.
 *
 * Keys are compared in constant time: both sides are hashed to SHA-256 first
 * (so `timingSafeEqual` gets equal lengths and the key's length leaks
 * nothing), and every configured key is compared on every request (so the
 * position of the matching key leaks nothing either).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { ApiKey } from "../config.js";
import { ApiError } from "./apiError.js";
import { ErrorCodes } from "../client/errorCodes.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The tenant whose key the request carries; set before the body is read (see buildApp). */
    tenant: string;
  }
}

export type Authenticate = (authorization: string | undefined) => string;

export function createAuthenticator(keys: readonly ApiKey[]): Authenticate {
  const hashed = keys.map(({ tenant, key }) => ({ tenant, digest: sha256(key) }));
  return (authorization) => {
    const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? "")?.[1];
    if (presented === undefined) {
      throw unauthorized("send the API key as `Authorization: Bearer <key>`");
    }
    const digest = sha256(presented);
    let tenant: string | undefined;
    for (const candidate of hashed) {
      if (timingSafeEqual(candidate.digest, digest)) tenant ??= candidate.tenant;
    }
    if (tenant === undefined) throw unauthorized("the API key is not valid");
    return tenant;
  };
}

function unauthorized(message: string): ApiError {
  return new ApiError(401, ErrorCodes.unauthorized, message, undefined, undefined, { "www-authenticate": 'Bearer realm="compactd"' });
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
