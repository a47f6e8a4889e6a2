import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { ObjCreateReqSchema } from '#shared/schemas/obj'
import { ObjCreateResSchema } from '#shared/schemas/obj-response'

/** `POST /obj/create`: the route tracing/create-obj serves. */
export const route = declareRoute({
  id: 'tracing/create-obj',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/obj/create',
  summary: 'Publish an object version',
  body: ObjCreateReqSchema,
  response: ObjCreateResSchema,
  example: {
    body: {
      obj: {
        project_id: EXAMPLE_IDS.projectId,
        object_id: EXAMPLE_IDS.objectId,
        val: {
          _type: 'StringPrompt',
          _class_name: 'StringPrompt',
          _bases: ['Prompt', 'Object', 'BaseModel'],
          content: 'Summarize in one sentence: {text}',
        },
      },
    },
  },
})
