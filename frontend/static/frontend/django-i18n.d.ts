// Django's JavaScript catalog (the `javascript-catalog` URL), loaded by frontend/base.html
// before any page script: every string a page shows goes through these.
declare function gettext(msgid: string): string;
declare function ngettext(singular: string, plural: string, count: number): string;
declare function pgettext(context: string, msgid: string): string;
declare function npgettext(context: string, singular: string, plural: string, count: number): string;
declare function interpolate(format: string, values: any[] | Record<string, any>, named?: boolean): string;
