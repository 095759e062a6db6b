/**
 * Words that carry no topic in English chat text. Questions are mostly made of them ("what did you say
 * about ..."), and without this list BM25 would spend the recall budget on events that share "did" and
 * "you" with the question instead of the one that shares its subject.
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both ' +
    'but by can could did do does doing down during each few for from further had has have having he her here hers ' +
    'herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on ' +
    'once only or other our ours ourselves out over own same she should so some such than that the their theirs them ' +
    'themselves then there these they this those through to too under until up very was we were what when where ' +
    'which while who whom why will with would you your yours yourself yourselves s t d ll m re ve don didn doesn ' +
    'isn wasn weren hasn haven hadn won wouldn shouldn couldn let lets also get got oh yeah ok okay'
  ).split(' '),
);
