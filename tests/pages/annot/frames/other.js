// Points an iframe at the other test origin (127.0.0.1 <-> localhost, same port): the frame is
// cross-origin (and cross-site, so Chromium runs it out of process).
function otherOrigin(path) {
  const host = location.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
  return `${location.protocol}//${host}:${location.port}${path}`;
}
function sameOrigin(path) {
  return `${location.origin}${path}`;
}
