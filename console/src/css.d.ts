// Stylesheets are side-effect imports that Vite bundles; TypeScript only needs to know they resolve.
declare module '*.css'
