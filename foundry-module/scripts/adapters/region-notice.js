/**
 * The region's config sheet (RegionConfig, an ApplicationV2 in V13 and V14: hook
 * `renderRegionConfig(app, element)`, `element` the sheet's HTMLElement) shows, when the bridge does
 * not use the region, a notice with the bridge's reason at the top of its content. Thin: the entry
 * comes from the service's IgnoredRegistry; only the DOM is touched here.
 */

const NOTICE_CLASS = "sightline-ignored";

/**
 * Put (or take away) the notice in a rendered sheet. Renders repeat (tabs, part re-renders): the
 * previous notice is always removed first, so there is never more than one.
 * @param {HTMLElement} element the sheet's root element
 * @param {{reason: string} | null} entry the bridge's entry for this region, or null when it is used
 * @param {{title: string}} text the notice's heading, localised
 * @returns {HTMLElement | null} the notice added, or null
 */
export function showIgnoredNotice(element, entry, { title }) {
  element.querySelector(`.${NOTICE_CLASS}`)?.remove();
  if (!entry?.reason) return null;
  const doc = element.ownerDocument;
  const notice = doc.createElement("div");
  notice.className = NOTICE_CLASS;
  notice.setAttribute("role", "status");
  const heading = doc.createElement("strong");
  heading.textContent = title;
  notice.append(heading, doc.createTextNode(` ${entry.reason}`));
  (element.querySelector(".window-content") ?? element).prepend(notice);
  return notice;
}
