import { describe, expect, it } from 'vitest'
import { app } from '#functions/tracing/create-obj/handler'
import { app as readApp } from '#functions/tracing/read-obj/handler'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

// `builtin_object_class` values normalised through the class model (docs/tracing.md §8.2), after the reference's
// tests/trace/test_builtin_object_classes.py.

const create = (caller: ProjectCaller, objectId: string, val: unknown, cls?: string) =>
  send(
    app,
    '/obj/create',
    { obj: { project_id: caller.project, object_id: objectId, val, ...(cls ? { builtin_object_class: cls } : {}) } },
    caller,
  )

const read = (caller: ProjectCaller, objectId: string, digest: string) =>
  send(readApp, '/obj/read', { project_id: caller.project, object_id: objectId, digest }, caller)

describe('POST /obj/create with builtin_object_class', () => {
  it('stores the class model’s dump, with nested models annotated and defaults filled (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const ref = 'weave:///e/p/object/TestOnlyNestedBaseObject:abc'
    const val = { primitive: 1, nested_base_model: { a: 2, aliased_property_alias: 3 }, nested_base_object: ref }

    // Act
    const res = await create(caller, 'TestOnlyExample', val, 'TestOnlyExample')
    const stored = await read(caller, 'TestOnlyExample', res.body.digest)

    // Assess
    expect(res.status).toBe(200)
    expect(stored.body.obj).toMatchObject({
      base_object_class: 'TestOnlyExample',
      leaf_object_class: 'TestOnlyExample',
    })
    expect(stored.body.obj.val).toEqual({
      _type: 'TestOnlyExample',
      name: null,
      description: null,
      primitive: 1,
      nested_base_model: {
        _type: 'TestOnlyNestedBaseModel',
        a: 2,
        aliased_property_alias: 3,
        _class_name: 'TestOnlyNestedBaseModel',
        _bases: ['BaseModel'],
      },
      nested_base_object: ref,
      _class_name: 'TestOnlyExample',
      _bases: ['BaseObject', 'BaseModel'],
    })
    expect(Object.keys(stored.body.obj.val)).toEqual([
      '_type',
      'name',
      'description',
      'primitive',
      'nested_base_model',
      'nested_base_object',
      '_class_name',
      '_bases',
    ])
  })

  it('gives the digest of the normalised value, the one an SDK publish of the same object gets (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const viaClass = await create(caller, 'nested', { b: 3 }, 'TestOnlyNestedBaseObject')
    const stored = await read(caller, 'nested', viaClass.body.digest)
    // The SDK sends the dump itself, with class information and no builtin_object_class.
    const pythonic = await create(caller, 'nested_sdk', stored.body.obj.val)

    // Assess
    expect(stored.body.obj.val).toEqual({
      _type: 'TestOnlyNestedBaseObject',
      name: null,
      description: null,
      b: 3,
      _class_name: 'TestOnlyNestedBaseObject',
      _bases: ['BaseObject', 'BaseModel'],
    })
    expect(pythonic.body.digest).toBe(viaClass.body.digest)
  })

  it('records an inherited class with its base class and full bases chain (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const res = await create(caller, 'inh', { b: 10, c: 20 }, 'TestOnlyInheritedBaseObject')
    const stored = await read(caller, 'inh', res.body.digest)

    // Assess
    expect(stored.body.obj).toMatchObject({
      base_object_class: 'TestOnlyNestedBaseObject',
      leaf_object_class: 'TestOnlyInheritedBaseObject',
      val: {
        _type: 'TestOnlyInheritedBaseObject',
        name: null,
        description: null,
        b: 10,
        c: 20,
        additional_field: 'default_value',
        _class_name: 'TestOnlyInheritedBaseObject',
        _bases: ['TestOnlyNestedBaseObject', 'BaseObject', 'BaseModel'],
      },
    })
  })

  it('answers an invalid value with 400 and pydantic’s validation error text (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const wrong = await create(caller, 'nested_obj', { a: 2, aliased_property_alias: 3 }, 'TestOnlyNestedBaseObject')
    const two = await create(caller, 'lb', { name: 7, columns: [{ scorer_name: 's' }] }, 'Leaderboard')
    const notList = await create(caller, 'lb', { columns: 'x' }, 'Leaderboard')

    // Assess
    expect(wrong).toEqual({
      status: 400,
      body: {
        reason:
          "1 validation error for TestOnlyNestedBaseObject\nb\n  Field required [type=missing, input_value={'a': 2, 'aliased_property_alias': 3}, input_type=dict]",
      },
    })
    expect(two.status).toBe(400)
    expect(two.body.reason.split('\n')).toEqual([
      '3 validation errors for Leaderboard',
      'name',
      '  Input should be a valid string [type=string_type, input_value=7, input_type=int]',
      'columns.0.evaluation_object_ref',
      "  Field required [type=missing, input_value={'scorer_name': 's'}, input_type=dict]",
      'columns.0.summary_metric_path',
      "  Field required [type=missing, input_value={'scorer_name': 's'}, input_type=dict]",
    ])
    expect(notList.body.reason).toBe(
      "1 validation error for Leaderboard\ncolumns\n  Input should be a valid list [type=list_type, input_value='x', input_type=str]",
    )
  })

  it('takes a value with its own class information as sent and checks only the class name (reference test)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const val = { b: 2, _class_name: 'TestOnlyNestedBaseObject', _bases: ['BaseObject', 'BaseModel'] }

    // Act
    const ok = await create(caller, 'nested_obj', val, 'TestOnlyNestedBaseObject')
    const stored = await read(caller, 'nested_obj', ok.body.digest)
    const mismatch = await create(caller, 'nested_obj', val, 'TestOnlyExample')

    // Assess
    expect(ok.status).toBe(200)
    expect(stored.body.obj.val).toEqual(val)
    expect(mismatch).toEqual({
      status: 400,
      body: {
        reason: "object_class must match val's defined object class: TestOnlyNestedBaseObject != TestOnlyExample",
      },
    })
  })

  it('coerces lax-mode values and drops unknown keys, as pydantic does', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const column = { evaluation_object_ref: 'r', scorer_name: 's', summary_metric_path: 'm', should_minimize: 'yes' }

    // Act
    const lb = await create(caller, 'lb', { columns: [column], extra: 1 }, 'Leaderboard')
    const model = await create(caller, 'pm', { provider: 'p', max_tokens: '512' }, 'ProviderModel')
    const lbVal = (await read(caller, 'lb', lb.body.digest)).body.obj.val
    const modelVal = (await read(caller, 'pm', model.body.digest)).body.obj.val

    // Assess
    expect(lbVal).toEqual({
      _type: 'Leaderboard',
      name: null,
      description: null,
      columns: [
        {
          _type: 'LeaderboardColumn',
          evaluation_object_ref: 'r',
          scorer_name: 's',
          summary_metric_path: 'm',
          should_minimize: true,
          _class_name: 'LeaderboardColumn',
          _bases: ['BaseModel'],
        },
      ],
      _class_name: 'Leaderboard',
      _bases: ['BaseObject', 'BaseModel'],
    })
    expect(modelVal).toMatchObject({ provider: 'p', max_tokens: 512 })
  })

  it('fills AnnotationSpec and Provider defaults and refuses unsafe provider settings with 400', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const provider = (extra: Record<string, unknown>) => ({
      base_url: 'https://api.example.com/v1',
      api_key_name: 'K',
      ...extra,
    })

    // Act
    const spec = await create(caller, 'spec', { name: 'score' }, 'AnnotationSpec')
    const ok = await create(caller, 'prov', provider({}), 'Provider')
    const local = await create(caller, 'prov', provider({ base_url: 'http://127.0.0.1:8080' }), 'Provider')
    const decimal = await create(caller, 'prov', provider({ base_url: 'http://2130706433/' }), 'Provider')
    const query = await create(caller, 'prov', provider({ base_url: 'https://api.example.com/?x=1' }), 'Provider')
    const header = await create(
      caller,
      'prov',
      provider({ extra_headers: { 'Metadata-Flavor': 'Google' } }),
      'Provider',
    )
    const badType = await create(caller, 'prov', provider({ return_type: 'anthropic' }), 'Provider')

    // Assess
    expect((await read(caller, 'spec', spec.body.digest)).body.obj.val).toEqual({
      _type: 'AnnotationSpec',
      name: 'score',
      description: null,
      field_schema: {},
      unique_among_creators: false,
      op_scope: null,
      _class_name: 'AnnotationSpec',
      _bases: ['BaseObject', 'BaseModel'],
    })
    expect((await read(caller, 'prov', ok.body.digest)).body.obj.val).toMatchObject({
      base_url: 'https://api.example.com/v1',
      extra_headers: {},
      return_type: 'openai',
    })
    for (const res of [local, decimal, query]) {
      expect(res).toEqual({ status: 400, body: { reason: 'base_url is not a valid provider URL' } })
    }
    expect(header).toEqual({ status: 400, body: { reason: 'extra_headers contains a disallowed header' } })
    expect(badType.body.reason).toBe(
      "1 validation error for Provider\nreturn_type\n  Input should be 'openai' [type=enum, input_value='anthropic', input_type=str]",
    )
  })

  it('accepts the registry’s other classes with class information only and refuses classes no longer registered', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const view = await create(caller, 'view', { definition: { a: 1 } }, 'SavedView')
    const action = await create(caller, 'act', { x: 1 }, 'ActionSpec')

    // Assess
    expect((await read(caller, 'view', view.body.digest)).body.obj.val).toEqual({
      definition: { a: 1 },
      _type: 'SavedView',
      _class_name: 'SavedView',
      _bases: ['BaseObject', 'BaseModel'],
    })
    expect(action).toEqual({ status: 400, body: { reason: 'Unknown object class: ActionSpec' } })
  })
})
