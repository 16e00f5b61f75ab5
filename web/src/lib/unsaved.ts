/**
 * While a screen holds unsaved changes, leaving it asks first: closing or reloading the tab (the
 * browser's own question), following a link of the dashboard, and the browser's Back and Forward.
 */
import { useEffect } from 'preact/hooks';

export function useUnsavedGuard(dirty: boolean, question: string): void {
  useEffect(() => {
    if (!dirty) return;
    const here = location.pathname + location.search;
    const beforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      // Older engines show the question only when returnValue is set.
      e.returnValue = '';
    };
    // In the capture phase, before the router's own listener on window takes the click.
    const click = (e: MouseEvent) => {
      if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
      const link = (e.target as Element | null)?.closest?.('a[href]') as HTMLAnchorElement | null;
      if (!link || (link.target && link.target !== '_self') || link.download || link.origin !== location.origin) return;
      if (link.pathname + link.search === here) return;
      if (!confirm(question)) {
        e.preventDefault();
        e.stopPropagation();
      }
    };
    // Back and Forward: a capture listener on window runs before the router's; refused, the
    // address is put back.
    const popstate = (e: PopStateEvent) => {
      if (location.pathname + location.search === here) return;
      if (!confirm(question)) {
        e.stopImmediatePropagation();
        history.pushState(null, '', here);
      }
    };
    addEventListener('beforeunload', beforeUnload);
    document.addEventListener('click', click, true);
    addEventListener('popstate', popstate, true);
    return () => {
      removeEventListener('beforeunload', beforeUnload);
      document.removeEventListener('click', click, true);
      removeEventListener('popstate', popstate, true);
    };
  }, [dirty, question]);
}
