import { Hono } from 'hono'
import { FUNCTIONS, type FunctionEntry } from '#functions/manifest'
import { config } from '#shared/config'
import type { AppEnv } from '#shared/http/app-env'
import { createInferenceApp, createTrainingApp } from '#shared/http/create-app'
import { drainUnreadBody } from '#shared/http/request-body'

type FunctionModule = { app: { fetch: (request: Request, env?: unknown) => Response | Promise<Response> } }

/** Loads one function's module by its manifest id. */
export async function loadFunction(entry: FunctionEntry): Promise<FunctionModule> {
  const specifier = `#functions/${entry.id}/handler`
  return (await import(/* @vite-ignore */ specifier)) as FunctionModule
}

/**
 * One Hono app that serves every function of the manifest, as API Gateway would: each route is dispatched to its own
 * function's `app`, so each family's middleware (auth scheme, error shape) applies only to its routes.
 */
export async function createLocalApp(functions: readonly FunctionEntry[] = FUNCTIONS): Promise<Hono> {
  const root = new Hono()
  // What answers a `/v1` request no route takes, in its family's shape as vLLM's server does (after the key check, a
  // 404, or a 405 with `Allow` for a path served under other methods), so the OpenAI SDK reads the error; training
  // routes live under `/v1/preview`. Each holds its family's routes only to know which methods a path has.
  const fallbacks = { inference: createInferenceApp(), training: createTrainingApp() }
  for (const entry of functions) {
    const { app } = await loadFunction(entry)
    for (const route of entry.routes) {
      // API Gateway's REST API matches a resource with or without a trailing slash; so does the local server (each
      // family app routes the slash form as the bare path: `strict: false`, shared/http/create-app.ts). The root stays
      // strict, so the Console's `/console` → `/console/` redirect does not loop.
      for (const path of route.path.endsWith('/') ? [route.path] : [route.path, `${route.path}/`]) {
        // The Node bindings (`incoming`, `outgoing`) travel along, so a function can read the body and watch for a
        // disconnect without materialising a full fetch `Request`.
        root.on(route.method, path, (c) => app.fetch(c.req.raw, c.env))
        if (entry.family === 'inference' || entry.family === 'training') {
          fallbacks[entry.family].on(route.method, path, (c) => app.fetch(c.req.raw, c.env))
        }
      }
    }
  }
  root.all('/v1/preview/*', (c) => fallbacks.training.fetch(c.req.raw, c.env as AppEnv['Bindings']))
  root.all('/v1/*', (c) => fallbacks.inference.fetch(c.req.raw, c.env as AppEnv['Bindings']))
  root.notFound(async (c) => {
    // No function reads the body of an unknown route: drained first, so an uploading client reads the 404.
    await drainUnreadBody(c, 2 * config.maxBodyBytes)
    return c.json({ reason: `No route for ${c.req.method} ${c.req.path}` }, 404)
  })
  return root
}
