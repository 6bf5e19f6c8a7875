// Modules a build plugin makes (see vite.redoc.ts).

/** The address of Redoc's standalone bundle, served from this server. */
declare module 'virtual:redoc-standalone' {
  const url: string
  export default url
}
