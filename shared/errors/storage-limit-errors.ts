import { BadRequestError, PayloadTooLargeError } from '#shared/errors/http-error'

/**
 * Typed errors for a write that DynamoDB's documented limits would refuse, raised by the data layer before anything
 * is sent (`shared/db/request-limits.ts`, `shared/db/item-size.ts`), so every family answers its own 4xx, never a 500.
 */

/** 400: a request value would make a key longer than DynamoDB allows (2,048 bytes partition, 1,024 sort). */
export class KeyTooLongError extends BadRequestError {}

/** 413: a value would make a stored item larger than DynamoDB's 400 KB item limit. */
export class ItemTooLargeError extends PayloadTooLargeError {}

/** 400: a value DynamoDB cannot store at all (a number outside its range, an empty key value). */
export class UnstorableValueError extends BadRequestError {}
