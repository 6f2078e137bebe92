import { autocompletion, closeBrackets, closeBracketsKeymap, closeCompletion, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { PostgreSQL, type SQLNamespace, sql } from '@codemirror/lang-sql';
import { bracketMatching, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { Compartment, EditorState, Prec, StateEffect, StateField } from '@codemirror/state';
import { Decoration, type DecorationSet, EditorView, highlightActiveLine, keymap, lineNumbers, placeholder } from '@codemirror/view';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';

/** What the SQL runner asks of its editor. */
export interface EditorHandle {
  /** The text to run: the selection when there is one, else everything; `offset` is where it starts. */
  runnable(): { text: string; offset: number };
  setText(text: string): void;
  /** Marks an error at a document offset (0-based); returns its line and column (1-based). */
  markError(at: number): { line: number; column: number };
  clearError(): void;
  focus(): void;
}

/** Token colours from CSS variables, so light and dark (prefers-color-scheme) both read well. */
const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.operatorKeyword], color: 'var(--color-sql-keyword)' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--color-sql-string)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--color-sql-number)' },
  { tag: [tags.typeName, tags.standard(tags.name)], color: 'var(--color-sql-type)' },
  { tag: [tags.lineComment, tags.blockComment], color: 'var(--color-fg-muted)', fontStyle: 'italic' },
]);

const setError = StateEffect.define<{ from: number; to: number } | null>();
const errorMark = Decoration.mark({ class: 'cm-sql-error', attributes: { 'aria-invalid': 'true' } });
const errorField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    let next = marks.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setError)) next = e.value ? Decoration.set([errorMark.range(e.value.from, e.value.to)]) : Decoration.none;
    }
    return tr.docChanged ? Decoration.none : next;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/**
 * CodeMirror 6 with PostgreSQL highlighting and completion of the schemas, tables and columns
 * the server lists; Ctrl/Cmd+Enter runs the selection or everything.
 */
export const SqlEditor = forwardRef<
  EditorHandle,
  { initial: string; schema: SQLNamespace; onRun: () => void; onChange: (text: string) => void }
>(function SqlEditor({ initial, schema, onRun, onChange }, ref) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const language = useRef(new Compartment());
  const handlers = useRef({ onRun, onChange });
  handlers.current = { onRun, onChange };

  // biome-ignore lint/correctness/useExhaustiveDependencies: the editor is made once; text changes go through the handle
  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: initial,
        extensions: [
          lineNumbers(),
          history(),
          bracketMatching(),
          closeBrackets(),
          highlightActiveLine(),
          autocompletion(),
          syntaxHighlighting(highlight),
          placeholder('select * from …  (Ctrl/Cmd+Enter runs)'),
          language.current.of(sql({ dialect: PostgreSQL, schema: {}, defaultSchema: 'public' })),
          errorField,
          Prec.highest(
            keymap.of([
              {
                key: 'Mod-Enter',
                run: () => {
                  handlers.current.onRun();
                  return true;
                },
              },
            ]),
          ),
          keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, indentWithTab]),
          EditorView.contentAttributes.of({ 'aria-label': 'SQL editor', 'aria-multiline': 'true' }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) handlers.current.onChange(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => v.destroy();
  }, []);

  useEffect(() => {
    view.current?.dispatch({
      effects: language.current.reconfigure(sql({ dialect: PostgreSQL, schema, defaultSchema: 'public' })),
    });
  }, [schema]);

  useImperativeHandle(ref, () => ({
    runnable() {
      const v = view.current;
      if (!v) return { text: '', offset: 0 };
      // Running is done typing: an open completion list would cover the results.
      closeCompletion(v);
      const { from, to } = v.state.selection.main;
      if (from !== to && v.state.sliceDoc(from, to).trim()) return { text: v.state.sliceDoc(from, to), offset: from };
      return { text: v.state.doc.toString(), offset: 0 };
    },
    setText(text) {
      const v = view.current;
      v?.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text }, selection: { anchor: text.length } });
    },
    markError(at) {
      const v = view.current;
      if (!v) return { line: 1, column: 1 };
      const pos = Math.max(0, Math.min(at, v.state.doc.length));
      const line = v.state.doc.lineAt(pos);
      const word = /^[\w$."]+/.exec(v.state.sliceDoc(pos, line.to))?.[0].length ?? 1;
      const to = Math.min(line.to, pos + Math.max(1, word));
      v.dispatch({ effects: setError.of({ from: pos, to: to > pos ? to : Math.min(v.state.doc.length, pos + 1) }) });
      return { line: line.number, column: pos - line.from + 1 };
    },
    clearError() {
      view.current?.dispatch({ effects: setError.of(null) });
    },
    focus() {
      view.current?.focus();
    },
  }));

  return <div ref={host} className="font-mono" />;
});
