import { useEffect, useRef, useState } from 'preact/hooks'
import { ErrorBox, PageHeader } from '../components/common'
import { fetchSpec } from '../lib/api'

type SwaggerUi = (options: Record<string, unknown>) => unknown
declare global {
  interface Window {
    SwaggerUIBundle?: SwaggerUi
  }
}

function meta(name: string): string | undefined {
  return document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content || undefined
}

let loading: Promise<SwaggerUi> | undefined

// A Swagger UI component wrapper that renders nothing in place of the component.
const hidden = () => () => null

// Swagger UI (swagger-ui-dist, served by Loom from its own origin) is loaded on this page only: it is about 1.4 MB,
// far more than the rest of the console, and outside its size budget.
function loadSwagger(): Promise<SwaggerUi> {
  loading ??= new Promise<SwaggerUi>((resolve, reject) => {
    const js = meta('loom-api-renderer-js')
    const css = meta('loom-api-renderer-css')
    if (js === undefined || css === undefined) return reject(new Error('The API renderer is not part of this build.'))
    const link = document.createElement('link')
    link.rel = 'stylesheet'
    link.href = css
    document.head.append(link)
    const script = document.createElement('script')
    script.src = js
    script.onload = () =>
      window.SwaggerUIBundle === undefined
        ? reject(new Error('Swagger UI did not load.'))
        : resolve(window.SwaggerUIBundle)
    script.onerror = () => reject(new Error(`Could not load ${js}`))
    document.head.append(script)
  })
  loading.catch(() => {
    loading = undefined
  })
  return loading
}

/** API: the OpenAPI reference from `/openapi.json`, rendered by Swagger UI. */
export function ApiPage() {
  const host = useRef<HTMLDivElement>(null)
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    let cancelled = false
    const abort = new AbortController()
    // The page fetches the document itself, so a failure shows in the console's error box with the API's message.
    Promise.all([loadSwagger(), fetchSpec(location.href, abort.signal)])
      .then(([SwaggerUIBundle, spec]) => {
        if (cancelled || host.current === null) return
        SwaggerUIBundle({
          spec,
          domNode: host.current,
          deepLinking: false,
          // No "Try it out" requests and no badge from the public validator: nothing leaves this origin.
          supportedSubmitMethods: [],
          validatorUrl: null,
          // Without "Try it out" a key entered in Authorize is never used: no Authorize button or per-operation locks,
          // so no dialog asks for a key (in a plain-text field) for nothing; openapi.json still names each scheme.
          plugins: [() => ({ wrapComponents: { authorizeBtn: hidden, authorizeOperationBtn: hidden } })],
        })
      })
      .catch((err) => cancelled || setError(err))
    return () => {
      cancelled = true
      abort.abort()
    }
  }, [])
  return (
    <div data-testid="page-api">
      <PageHeader title="API">
        <a href="../openapi.json" data-testid="openapi-link">
          openapi.json
        </a>
      </PageHeader>
      <ErrorBox error={error} testId="api-error" />
      <div class="swagger" ref={host} data-testid="api-reference" />
    </div>
  )
}
