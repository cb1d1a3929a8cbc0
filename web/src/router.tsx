/**
 * History-API routing under the application's base (`<base href>` of the shell, e.g. /dev/app/):
 * every page has its own address, deep links load the same shell, back and forward work.
 */
import type { ComponentChildren } from 'preact';
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
