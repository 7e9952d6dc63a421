/** File-name-safe GPU name, so results of different GPUs can live side by side. */
export function gpuSlug(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug === '' ? 'unknown-gpu' : slug;
}
