/**
 * The README and the pages under docs/ link to each other and to files of the repository: every relative link
 * must lead to a file that exists, and a link to a heading (`page.md#heading`) to a heading that page has, so a
 * newcomer following the README never lands on a 404 or at the top of the wrong page.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const pages = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsIn(page: string): Set<string> {
  const text = readFileSync(page, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

/** Every Markdown link target outside code, except absolute URLs and mail addresses. */
function relativeLinks(page: string): string[] {
  const text = readFileSync(page, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

describe('links in README.md and docs/', () => {
  it('finds the pages and links it checks', () => {
    expect(pages).toContain('README.md');
    expect(pages.length).toBeGreaterThan(5);
    expect(relativeLinks('README.md').length).toBeGreaterThan(10);
  });

  it.each(pages)('every relative link in %s leads to an existing file and heading', (page) => {
    const broken: string[] = [];
    for (const target of relativeLinks(page)) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? page : normalize(join(dirname(page), decodeURI(path)));
      if (!existsSync(file)) broken.push(`${target}: no file ${file}`);
      else if (anchor && file.endsWith('.md') && !anchorsIn(file).has(anchor))
        broken.push(`${target}: no heading #${anchor} in ${file}`);
    }
    expect(broken).toEqual([]);
  });
});
