import type { SendOptions } from '#shared/db/client'
import { putIfAbsent } from '#shared/db/conditional-write'
import { queryIndexAll } from '#shared/db/index-query'
import { queryAll } from '#shared/db/query'
import { type Membership, MembershipSchema } from '#shared/schemas/api-key'

// Memberships: PK=USER#<user> SK=MEMBER#<entity>; GSI1 lists an entity's members.

/** Adds a user to an entity; idempotent (a repeated add keeps the first record's role and date). */
export async function addMembership(membership: Membership): Promise<void> {
  await putIfAbsent({
    PK: `USER#${membership.userId}`,
    SK: `MEMBER#${membership.entity}`,
    GSI1PK: `ENTITY#${membership.entity}`,
    GSI1SK: `MEMBER#${membership.userId}`,
    ...membership,
  })
}

/** The entities a user belongs to. */
export async function listUserMemberships(userId: string, options?: SendOptions): Promise<Membership[]> {
  const items = await queryAll(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': `USER#${userId}`, ':sk': 'MEMBER#' },
      ConsistentRead: true,
    },
    options,
  )
  return items.map((item) => MembershipSchema.parse(item))
}

/** The members of an entity. */
export async function listEntityMembers(entity: string): Promise<Membership[]> {
  const items = await queryIndexAll({
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :sk)',
    ExpressionAttributeValues: { ':pk': `ENTITY#${entity}`, ':sk': 'MEMBER#' },
  })
  return items.map((item) => MembershipSchema.parse(item))
}
