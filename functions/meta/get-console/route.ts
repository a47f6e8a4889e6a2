import { declareFunction } from '#shared/routes/declare'

/** The routes meta/get-console serves: `GET /`, `GET /console`, `GET /console/:file`. */
export const route = declareFunction({
  // The Loom Console: public page and assets; its API calls carry the user's key. `GET /` redirects to it.
  id: 'meta/get-console',
  family: 'meta',
  access: 'none',
  auth: false,
  routes: [
    {
      method: 'GET',
      path: '/',
      summary: 'Redirects a browser to the Loom Console (302 to /console/)',
      redirect: '/console/',
    },
    {
      method: 'GET',
      path: '/console',
      summary: 'The Loom Console (302 to /console/)',
      redirect: '/console/',
    },
    {
      method: 'GET',
      path: '/console/:file',
      summary: 'The Loom Console: `index.html` at /console/ and its content-hashed scripts and styles',
      responseMediaType: 'text/html',
      example: { params: { file: 'index.html' } },
    },
  ],
})
