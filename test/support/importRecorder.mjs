// Loader hooks that report every resolved module URL to the main thread (registered by recordImports.mjs).
let port;
export function initialize(data) {
  port = data.port;
}
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}
