// upload: set files on an <input type=file>. The host reads the files (paths on the user's machine
// that the model named) and sends their bytes in parts (a native message to the extension is
// limited to 1 MB); the page builds File objects from them and sets them through a DataTransfer.
// Why not CDP's DOM.setFileInputFiles: Chrome refuses it to an extension without file access
// ("Not allowed"), and with it the browser would read any path itself. This way the browser
// reads nothing from disk and only the input the model aimed at receives the bytes.

import { Code, ShotError } from './errors.js';
import { page } from './input.js';
import { finish, pageBefore, whereOf } from './aiming.js';

const PART_TTL_MS = 60_000;
/** @type {Map<string, {parts: string[], timer: ReturnType<typeof setTimeout>}>} */
const pending = new Map();

/** @param {string} id */
function drop(id) {
  const got = pending.get(id);
  if (got) clearTimeout(got.timer);
  pending.delete(id);
}

/**
 * `upload_part {upload_id, index, data}`: one part of the files' bytes, base64 (parts cut at
 * multiples of 3 bytes, so they join as one base64 text).
 * @param {import('./context.js').CommandContext} ctx
 */
export async function uploadPart(ctx) {
  const { upload_id: id, index, data } = ctx.args;
  const got = pending.get(id) ?? { parts: [], timer: setTimeout(() => drop(id), PART_TTL_MS) };
  pending.set(id, got);
  got.parts[index] = data;
  return { received: got.parts.filter((p) => p !== undefined).length };
}

/**
 * `upload {selector | x, y, upload_id, files: [{name, mime, size, path}]}` → the input's files now.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function upload(ctx) {
  const a = ctx.args;
  const got = pending.get(a.upload_id);
  drop(a.upload_id);
  const parts = got?.parts ?? [];
  if (parts.length !== a.parts || parts.some((p) => p === undefined)) {
    throw new ShotError(Code.BAD_REQUEST, `upload ${a.upload_id} has ${parts.filter(Boolean).length} of its ${a.parts} parts; send them again with upload_part.`);
  }
  const { tabId, before } = await pageBefore(ctx, a.expect_url);
  const { where, notes } = await whereOf(tabId, a, before, 'upload');
  ctx.step = 'setting the files';
  const out = await page(tabId, 'setFiles', { ...where, b64: parts.join(''), files: a.files });
  return finish(tabId, before, { action: 'upload', ...out }, notes);
}
