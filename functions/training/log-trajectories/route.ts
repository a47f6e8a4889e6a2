import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { IdempotencyKeySchema, LogRequestSchema, LogResponseSchema } from '#shared/schemas/training-log'

/** `POST /v1/preview/models/:model_id/log`: the route training/log-trajectories serves. */
export const route = declareRoute({
  id: 'training/log-trajectories',
  family: 'training',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/v1/preview/models/:model_id/log',
  summary: 'Log trajectories and calculate metrics',
  body: LogRequestSchema,
  headers: [
    {
      name: 'Idempotency-Key',
      description:
        'Optional: a retry with the same key and body answers the first response and writes nothing; the same key ' +
        'with another body is 422 (docs/training.md §4)',
      schema: IdempotencyKeySchema,
    },
  ],
  response: LogResponseSchema,
  example: {
    // What ART sends after a rollout: groups of trajectories, each a chat with a reward.
    params: { model_id: EXAMPLE_IDS.modelId },
    body: {
      model_id: EXAMPLE_IDS.modelId,
      split: 'train',
      trajectory_groups: [
        {
          trajectories: [
            {
              messages_and_choices: [
                { role: 'system', content: 'You are a careful solver.' },
                { role: 'user', content: 'What is 2 + 2?' },
                { finish_reason: 'stop', index: 0, logprobs: null, message: { role: 'assistant', content: '4' } },
              ],
              reward: 1,
              metrics: { correct: true },
            },
          ],
        },
      ],
    },
  },
})
