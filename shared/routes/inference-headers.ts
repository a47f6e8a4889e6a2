import type { HeaderParameter } from '#shared/routes/declare'

/**
 * The project headers every `/v1` inference route reads (docs/inference.md §1), with what the route does with the
 * project (`use`): `Compat-Project` wins over `OpenAI-Project`, a blank one counts as absent.
 *
 * @example
 * headers: projectHeaders('the models listed are its entity’s')
 */
export function projectHeaders(use: string): HeaderParameter[] {
  return [
    {
      name: 'OpenAI-Project',
      description:
        `The request's project, \`<entity>/<project>\` (W&B project-name rules): ${use}. Without it (or blank), the ` +
        "key's entity and project `inference`. Another entity's project is 403, a malformed one 400 with this `param`",
    },
    {
      name: 'Compat-Project',
      description: 'The same as `OpenAI-Project`, which it overrides when both are sent and it is not blank',
    },
  ]
}
