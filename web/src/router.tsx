/**
 * History-API routing under the application's base (`<base href>` of the shell, e.g. /dev/app/):
 * every page has its own address, deep links load the same shell, back and forward work; a table
 * of routes (`/pipelines/:pipelineId` → a page) says which page an address shows.
 */
import type { ComponentChildren, ComponentType, VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const APP_PATH = new URL('.', document.baseURI).pathname;

export interface Location {
  /** The path under the application, without a leading slash: '', 'pipelines/abc', … */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const { pathname, search } = window.location;
  const path = pathname.startsWith(APP_PATH) ? pathname.slice(APP_PATH.length) : '';
  return { path: path.replace(/\/+$/, ''), query: new URLSearchParams(search) };
}

const listeners = new Set<() => void>();
addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The application's address for a path under it. */
export function href(path: string): string {
  return `${APP_PATH}${path}`;
}

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', href(path));
  else history.pushState(null, '', href(path));
  scrollTo(0, 0);
  for (const listener of listeners) listener();
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return location;
}

interface LinkProps {
  to: string;
  children: ComponentChildren;
  class?: string;
  'aria-label'?: string;
}

/** A link inside the application: a real <a href> (open in a new tab works), routed in place. */
export function Link({ to, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a {...rest} href={href(to)} onClick={onClick}>
      {children}
    </a>
  );
}

/** The parameters a pattern names: `/runs/:runId` → `{ runId: string }`. */
export type RouteParams<Pattern extends string> = Pattern extends `${string}:${infer Name}/${infer Rest}`
  ? { [Key in Name]: string } & RouteParams<`/${Rest}`>
  : Pattern extends `${string}:${infer Name}`
    ? { [Key in Name]: string }
    : Record<never, string>;

export interface Route {
  /** `/`-separated segments under the application; `:name` matches one segment, decoded. */
  pattern: string;
  /** The page for the parameters the pattern matched. */
  render: (params: Record<string, string>) => VNode;
}

/** A row of a route table, its page typed by the parameters its pattern names. */
export function route<Pattern extends string>({
  pattern,
  page: Page,
}: {
  pattern: Pattern;
  page: ComponentType<RouteParams<Pattern>>;
}): Route {
  // matchPattern gives exactly the names the pattern has, which RouteParams spells out.
  return { pattern, render: (params) => <Page {...(params as RouteParams<Pattern>)} /> };
}

const segments = (path: string) => path.split('/').filter((segment) => segment !== '');

/** The parameters of `path` (without a leading slash) when `pattern` matches it. */
export function matchPattern(pattern: string, path: string): Record<string, string> | undefined {
  const wanted = segments(pattern);
  const given = segments(path);
  if (wanted.length !== given.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of wanted.entries()) {
    const value = given[index] ?? '';
    if (!part.startsWith(':')) {
      if (part !== value) return undefined;
      continue;
    }
    try {
      params[part.slice(1)] = decodeURIComponent(value);
    } catch {
      return undefined; // A malformed escape is no address of the application.
    }
  }
  return params;
}

/** The page of the first route that matches `path`, else `fallback`. */
export function Routes(props: { routes: readonly Route[]; path: string; fallback: ComponentType }) {
  for (const { pattern, render } of props.routes) {
    const params = matchPattern(pattern, props.path);
    if (params) return render(params);
  }
  return <props.fallback />;
}
