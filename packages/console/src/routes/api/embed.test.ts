import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { embedded, embeddedName, selectItems, toggleEmbed } from './embed';

describe('the relation picker’s select edits', () => {
  it('splits a select at its top-level commas only', () => {
    expect(selectItems('id, title,authors(id,name),tags!post_tags(name)')).toEqual([
      'id',
      'title',
      'authors(id,name)',
      'tags!post_tags(name)',
    ]);
    expect(selectItems('"a,b",c')).toEqual(['"a,b"', 'c']);
    expect(selectItems('')).toEqual([]);
  });

  it('names the relation an item embeds, through an alias, a hint or a spread', () => {
    expect(embeddedName('writer:authors!posts_editor_id_fkey(name)')).toBe('authors!posts_editor_id_fkey');
    expect(embeddedName('...authors(name)')).toBe('authors');
    expect(embeddedName('title')).toBeNull();
  });

  it('adds a relation after the row’s columns (all of them when none were chosen) and takes it out again', () => {
    expect(toggleEmbed('', 'authors', true)).toBe('*,authors(*)');
    expect(toggleEmbed('id,title', 'authors', true)).toBe('id,title,authors(*)');
    expect(toggleEmbed('*,authors(*)', 'comments', true)).toBe('*,authors(*),comments(*)');
    expect(toggleEmbed('*,authors(*)', 'authors', false)).toBe('');
    expect(toggleEmbed('id,authors(name),comments(*)', 'authors', false)).toBe('id,comments(*)');
    expect(embedded('id,a:authors(name),comments(*)', ['authors', 'comments', 'tags'])).toEqual(new Set(['authors', 'comments']));
  });

  it('an embed added then taken out leaves the columns the user chose', () => {
    const column = fc.stringMatching(/^[a-z_]{1,8}$/);
    fc.assert(
      fc.property(fc.array(column, { minLength: 1, maxLength: 5 }), fc.stringMatching(/^[a-z_]{1,8}(![a-z_]{1,8})?$/), (cols, rel) => {
        const select = cols.join(',');
        const on = toggleEmbed(select, rel, true);
        expect(embedded(on, [rel]).has(rel)).toBe(true);
        expect(toggleEmbed(on, rel, false)).toBe(select);
      }),
    );
  });
});
