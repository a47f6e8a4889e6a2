import * as z from 'zod/mini'

/** A project that holds data: registered the first time anything is stored under its `<entity>/<project>` id. */
export const ProjectSchema = z.object({
  project_id: z.string(),
  entity: z.string(),
  project: z.string(),
  /** When Loom first stored data in the project (ISO 8601, UTC). */
  first_seen_at: z.string(),
})
export type Project = z.infer<typeof ProjectSchema>

/** `GET /projects` answer: the projects of the key's entities, by entity then project name. */
export const ProjectListResSchema = z.object({ projects: z.array(ProjectSchema) })
export type ProjectListRes = z.infer<typeof ProjectListResSchema>
