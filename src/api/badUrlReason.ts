import { parseUrl } from "../http/parseUrl.js";

/**
 * Why fastify's router refused a request target (its FST_ERR_BAD_URL). It
 * raises that one error both for an absolute-form target (`GET http://host/x
 * HTTP/1.1`) it cannot read and for a path whose %-escape does not decode; an
 * answer naming the wrong cause sends a client hunting for an escape it never
 * sent. The target is never repeated: it may be thousands of characters.
 */
export function badUrlReason(target: string): string {
  if (target.startsWith("/")) return PATH_ESCAPE;
  if (!/^https?:\/\//i.test(target)) return "the request target is neither a path (/…) nor an absolute http:// or https:// URL";
  if (target.includes("#")) return "the request target is an absolute URL holding a fragment (#…), which a request may not send";
  const hostless = /^https?:\/\/[/?]/i.test(target) || /^https?:\/\/$/i.test(target);
  if (hostless || parseUrl(target) === undefined) return "the request target is an absolute URL whose host or port is missing or malformed";
  return PATH_ESCAPE;
}

const PATH_ESCAPE = "the URL's path holds a %-escape that does not decode";
