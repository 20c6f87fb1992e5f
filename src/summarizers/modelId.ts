/**
 * What a model id looks like, to the service: the same rule for a request's
 * `model` and for COMPACTD_MODEL, so a model name the API would refuse in a
 * request cannot be configured as the default that every job then sends,
 * and fail with, at the model's API. The rule is only the form (no provider
 * lists its ids the same way, and proxies rename them); whether the model
 * exists is the provider's to say.
 */

/** 1-200 characters, none of them white space or a control character. */
export const MODEL_ID = /^[^\s\p{Cc}]{1,200}$/u;

/** {@link MODEL_ID} in words, for error messages and the docs. */
export const MODEL_ID_FORM = "a model id: 1-200 characters without spaces or control characters";
