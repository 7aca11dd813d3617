"""Word tables for ``contract.lexicon``: general English and general database shorthand only.

Nothing here names a particular data set: the abbreviations are the ones that turn up in column
names of any business schema, the common words are a compact vocabulary of business/database
English used to split glued names (``unitprice`` -> ``unit price``), and the role phrases describe
organisations in general (who reports to whom, who created or owns a row).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _table(spec: str) -> Mapping[str, tuple[str, ...]]:
    """``"acct=account; st=street|state"`` -> ``{"acct": ("account",), "st": ("street", "state")}``."""
    out: dict[str, tuple[str, ...]] = {}
    for item in spec.split(";"):
        item = item.strip()
        if not item:
            continue
        key, _, vals = item.partition("=")
        out[key.strip()] = tuple(v.strip() for v in vals.split("|") if v.strip())
    return MappingProxyType(out)


# Common shorthand in column and table names -> full words. Ambiguous ones list every reading,
# the most common first. Multi-word readings are space-separated.
ABBREVIATIONS: Mapping[str, tuple[str, ...]] = _table(
    """
    acct=account; accts=accounts; acc=account; bal=balance; qty=quantity; qnty=quantity; amt=amount;
    ext=extended|extension; desc=description; descr=description; dsc=description;
    num=number; no=number; nbr=number; nr=number; nmbr=number; dt=date; ts=timestamp; tm=time;
    addr=address; cust=customer; emp=employee; empl=employee; mgr=manager; mngr=manager;
    dept=department; dep=departure|department; arr=arrival; cat=category; categ=category;
    prod=product; dob=date of birth; tel=telephone|phone; ph=phone; phn=phone; fname=first name;
    lname=last name; mname=middle name; fn=first name; ln=last name; st=street|state; str=street;
    cnt=count; ct=count; pct=percent|percentage; perc=percent; avg=average; min=minimum|minute;
    max=maximum; tot=total; ttl=total; yr=year; yrs=years; mo=month; mth=month; mon=month|monday;
    wk=week; dy=day; hr=hour; hrs=hours; sec=second; ms=milliseconds; msec=milliseconds;
    dur=duration; len=length; lang=language; msg=message; img=image; pic=picture; url=link|web address;
    dest=destination; orig=origin|original; src=source; lat=latitude; lon=longitude; lng=longitude;
    long=longitude; alt=altitude|alternate; tz=time zone; dst=daylight saving time;
    loc=location; org=organization; inv=invoice|inventory; txn=transaction; trx=transaction;
    trans=transaction; pmt=payment; pymt=payment; ord=order; sku=stock keeping unit;
    uom=unit of measure; wt=weight; wgt=weight; ht=height; hgt=height; dim=dimension; vol=volume;
    temp=temperature|temporary; sched=scheduled|schedule; est=estimated; act=actual|account;
    actl=actual; seq=sequence; ref=reference; stat=status|statistic; sts=status; cd=code; typ=type;
    grp=group; div=division; reg=region|registration; terr=territory; ctry=country; cntry=country;
    cty=city|county; prov=province; zip=zip code|postal code; postcode=postal code;
    mfr=manufacturer; mfg=manufacturer|manufacturing; mdl=model; info=information;
    id=identifier; ids=identifiers; uid=user identifier; pk=primary key; fk=foreign key;
    attr=attribute; val=value; vals=values; def=default|definition; cfg=configuration;
    conf=configuration|confirmation; config=configuration; stmt=statement; tbl=table; col=column;
    idx=index; ver=version; doc=document; docs=documents; dir=directory|director;
    pos=position; cap=capacity; co=company; corp=corporation; biz=business; svc=service;
    srv=service|server; sys=system; usr=user; pwd=password; pw=password; admin=administrator;
    auth=author|authorization; pub=publisher|published|public; publ=publisher; ed=edition|editor;
    edu=education; exp=expiration|expense|experience; expr=expiration; exch=exchange; ccy=currency;
    cur=currency|current; curr=currency|current; fx=foreign exchange; px=price; prc=price;
    disc=discount; dsct=discount; vat=value added tax; gst=goods and services tax;
    rcpt=receipt; rcv=received; recv=received; rec=record|received; req=request|required;
    resp=response|responsible; res=reservation|result; rtn=return; ret=return; rma=return merchandise authorization;
    ship=shipment|shipping; shp=shipment; shpt=shipment; dlv=delivery; dlvry=delivery;
    deliv=delivery; whse=warehouse; wh=warehouse; wrhs=warehouse; supp=supplier|supply;
    sup=supplier; supl=supplier; vend=vendor; vndr=vendor; mkt=market; mktg=marketing;
    sls=sales; rep=representative; reps=representatives; asst=assistant; assoc=associate;
    mgmt=management; hq=headquarters; bldg=building; fl=floor; apt=apartment; ste=suite;
    ave=avenue; rd=road; blvd=boulevard; dist=distance|district; cntr=center|counter;
    ctr=center|counter; lvl=level; pri=priority; prio=priority; prty=priority; frq=frequency;
    freq=frequency; stk=stock; avail=available|availability; cmt=comment; cmnt=comment;
    comm=commission|comment; nm=name; nme=name; titl=title; gen=gender|generation; sex=gender;
    nat=nationality|national; natl=national; intl=international; dom=domestic; pop=population;
    ssn=social security number; dl=driver license; lic=license; cert=certificate;
    vin=vehicle identification number; veh=vehicle; mdt=modified date; mod=modified|model;
    upd=updated; crt=created; cre=created; del=deleted; chg=change; tgt=target; bkt=bucket;
    calc=calculated; adj=adjusted|adjustment; tmp=temporary; prev=previous; nxt=next;
    fcst=forecast; bud=budget; bgt=budget; cst=cost; prft=profit; rev=revenue|revision;
    rt=rate|route; flt=flight; arpt=airport; eta=estimated time of arrival;
    etd=estimated time of departure; carr=carrier; acft=aircraft; pax=passengers; sal=salary;
    mrg=margin; yld=yield; pts=points; pt=point|part;
    rm=room; hosp=hospital; dx=diagnosis; rx=prescription; med=medication|medical|median; dr=doctor|driver; std=standard;
    stdev=standard deviation; sd=standard deviation; var=variance|variable; obs=observation;
    meas=measure|measurement; sz=size; clr=color; colr=color; lbl=label; grd=grade; scr=score
    """
)

# Words that mark a key/identifier column rather than its meaning: ``CustomerId`` is about a customer.
KEY_WORDS: frozenset[str] = frozenset(
    {"id", "ids", "key", "pk", "fk", "uuid", "guid", "sk", "no", "num", "nbr", "nr", "code", "cd", "ref"}
)

# Short function words: never a split half, never abbreviation-expanded when they are plain English.
STOPWORDS: frozenset[str] = _words(
    "a an and are as at be by for from has have in is it of on or per the to via was with"
)

# A compact vocabulary of common business/database English, used to split glued lower-case
# names into two known words. Real English words (per the lemma dictionary) are never split.
COMMON_WORDS: frozenset[str] = _words(
    """
    account accounts active activity actual add added address admin age agent agreement air
    airline airport alias allowance amount annual answer apartment app application approval
    approved area arrival article artist asset assigned attachment attempt attribute audit author
    available average award balance bank base batch begin bill billing birth birthday block board
    body bonus book booking box branch brand budget build building bundle business buy buyer cabin
    calendar call campaign cancel cancelled capacity capital card carrier cart case cash catalog
    category cell center change channel charge check child city claim class clause clerk client
    close closed code collection color column comment commission commit company complete condition
    config contact content contract control cost count counter country county coupon course cover
    create created credit currency current customer cycle daily data date day deadline deal debit
    default degree delete deleted delivery demand department deposit depth description design
    destination detail device direction director discount display distance district division
    document domain done draft driver due duration early edit edition education effective email
    employee end engine entity entry environment equipment error estimate estimated event exchange
    expense expiry expire external extended extension factor family fare fax feature fee field
    file filter final first flag fleet flight floor flow form format free frequency from full fund
    gender genre given global goal grade grand grant gross group guest half hand head height hire
    history hold holiday home hour hours house image import income index info initial input
    instruct instruction insurance interest internal invoice issue item job join key kind label
    language last late latitude launch lead leave ledger legal length level license limit line
    link list load loan local location lock log login long longitude loss lot low main maker
    manager margin mark market master match max maximum measure media medium member memo menu
    merchant message method middle mile milestone min minimum minute mobile mode model modified
    money month name nation national net new next night node note notes number object offer office
    online open opening operator option order origin original outcome output owner package page
    paid parent part partner party pass password path patient pay payment peak period permit
    person phone pick place plan plant platform play player point policy pool port position post
    postal price primary print priority private process product profile profit program project
    promo promotion property provider public publish purchase quality quantity query queue quote
    race range rank rate rating reason receipt receive received record reference region register
    registration release remark rent rental repair report request required reserve reservation
    resource response result retail return revenue review reward risk role room root route row
    rule run safety salary sale sales sample save schedule scheduled school score search season
    seat second section sector segment sell seller send serial series server service session set
    setting share ship shipment shipping shop short side sign signup site size skill slot social
    source space special speed split sport staff stage stamp standard start state statement
    station status step stock stop storage store street style sub subject submit summary supplier
    supply support survey system table tag tail target task tax team term territory test text
    ticket tier time timestamp title token tool top total track trade transaction transfer travel
    trip type unit update updated upload usage use user valid value vendor version visit volume wage
    warehouse web week weight width work year zip zone
    """
)

# Relationship phrases for common foreign-key stems (the FK column without its id word, or a
# relationship name), about organisations in general. Keys are lemmatised words joined by spaces.
ROLE_PHRASES: Mapping[str, tuple[str, ...]] = _table(
    """
    manager=manager|managed by|reports to|works for|boss|supervisor;
    supervisor=supervisor|supervised by|reports to|manager|boss;
    boss=boss|manager|reports to|works for;
    report to=reports to|manager|boss|supervisor|works for;
    parent=parent|belongs to|part of|child of|under;
    owner=owner|owned by|belongs to;
    own by=owned by|owner|belongs to;
    create by=created by|creator|author|made by;
    creator=creator|created by|author;
    author=author|written by|created by;
    update by=updated by|modified by|last changed by;
    modify by=modified by|updated by;
    assign to=assigned to|assignee|handled by|responsible;
    assignee=assignee|assigned to|handled by|responsible;
    approve by=approved by|approver;
    approver=approver|approved by;
    sell by=sold by|seller|salesperson|sales rep;
    seller=seller|sold by|salesperson;
    salesperson=salesperson|sold by|sales rep|seller;
    sale rep=sales rep|sales representative|salesperson|sold by|account manager;
    rep=rep|representative|account manager|handled by;
    representative=representative|rep|account manager|handled by;
    support rep=support rep|support representative|account manager|handled by;
    handle by=handled by|handler|responsible;
    refer by=referred by|referrer;
    referrer=referrer|referred by;
    mentor=mentor|mentored by|coach;
    lead=lead|leader|led by|head;
    leader=leader|led by|head;
    head=head|headed by|leader;
    contact=contact|contact person|point of contact;
    spouse=spouse|married to|partner;
    sponsor=sponsor|sponsored by
    """
)

# Extra phrases when a relationship points back at its own type (an employee's manager is an employee).
SELF_ROLE_PHRASES: Mapping[str, tuple[str, ...]] = _table(
    """
    report to=manager|boss|supervisor|works for|manager of|reports|direct report|subordinate;
    manager=manager of|subordinate|direct report|reports;
    supervisor=supervisor of|subordinate;
    parent=parent|child|subcategory|subordinate|hierarchy;
    mentor=mentee
    """
)
